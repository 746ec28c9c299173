"""`reprokit new-case` as the command line asks it: the oracle from its flags (any non-zero exit where none is given
and no run of the script here can propose one), the case made, and the one line that says what was written and the
`reprokit run` to try next, on the target whose device this machine is."""

from __future__ import annotations

from pathlib import Path

from reprokit.contrib import case_target, new_case
from reprokit.run.request import load_root_matrix


def scaffold(
    root: Path,
    case_id: str,
    *,
    source: str | None,
    fixed: str | None,
    oracle_flags: tuple,
    observe_run: bool,
    provenance: new_case.Provenance,
    title: str | None,
    category: str | None,
    links: list[str],
    timeout: int | None,
) -> str:
    """Make cases/ID (new_case.create) and return the line to print."""
    oracle = new_case.oracle_from_flags(*oracle_flags)
    if oracle is None and (not source or not observe_run):
        oracle = {"kind": "nonzero-exit"}
    folder = new_case.create(
        root / "cases",
        case_id,
        source=Path(source) if source else None,
        title=title,
        category=category,
        links=links,
        oracle=oracle,
        timeout=timeout,
        fixed=Path(fixed) if fixed else None,
        provenance=provenance,
        observe_run=observe_run,
    )
    target, why = case_target.target_to_run(load_root_matrix(root).targets, folder)
    return (
        f"created {folder.relative_to(root)}/ ({', '.join(sorted(p.name for p in folder.iterdir()))}); next: "
        f"reprokit run --target {target} --case {case_id}" + (f" ({why})" if why else "")
    )
