"""`reprokit bisect` as the command line asks it: its arguments checked against the target's history, a case or a
script (`--from`) bisected, and what it answers said in lines, with the exit status a script reads (1: undecided,
never to be read as found; 130: interrupted, what finished is in the store)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reprokit.contrib import bisect_case, bisect_script, bisection, new_case
from reprokit.model.schema import InputError
from reprokit.run.request import RunRequest, load_root_matrix, target_of


@dataclass(frozen=True)
class BisectAsk:
    case_id: str | None
    script: str | None  # --from SCRIPT, as given (and as the answer names it)
    versions: list[str] | None  # --versions, else the target's pins.history
    between: bool  # search the history releases between the given ones too
    oracle_flags: tuple  # new_case.oracle_from_flags' arguments, read only with --from
    keep: bool
    timeout: int | None
    max_envs: int | None


def bisect(req: RunRequest, ask: BisectAsk, log=print) -> int:
    """Bisect; log says progress and then the answer. The releases of the history left out of --versions are named
    in the answer, so that "first bad" is never read as more than what was searched."""
    target = target_of(load_root_matrix(req.root), req.target)
    versions = bisection.candidates(ask.versions, target.pins.history, between=ask.between)
    also_between = tuple(v for v in target.pins.history if v not in versions)
    if len(versions) < 2:
        raise InputError(
            f"matrix.yaml: targets.{req.target}.pins.history: needs two releases or more to bisect (or pass --versions)"
        )
    if not ask.case_id and not ask.script:
        raise InputError("bisect: give a case ID or --from SCRIPT")
    done = None
    try:
        if ask.script:
            script = Path(ask.script)
            oracle = new_case.oracle_from_flags(*ask.oracle_flags)
            keep_id = (ask.case_id or bisect_script.case_id_for(script)) if ask.keep else None
            done = bisect_script.bisect_from(
                req, script.resolve(), versions, oracle, ask.timeout, keep_id=keep_id, log=log, max_envs=ask.max_envs
            )
            found = done.found
        else:
            assert ask.case_id is not None  # refused above without one
            found = bisect_case.bisect_case(req, ask.case_id, versions, log=log, max_envs=ask.max_envs)
    except bisection.BisectionInterrupted as stop:
        log(f"bisect: interrupted while running torch {stop}; what finished is in the store, run it again to go on")
        return 130
    if done is not None:
        log("\n".join(done.table()))
        log(f"kept as cases/{done.case_id}/" if done.kept else "not kept (--keep makes it a case)")
        if done.scratch:
            log(
                f"undecided: the scratch repository with what each run printed is kept in {done.scratch} "
                f"(`reprokit --root {done.scratch} history --case {done.case_id}`)"
            )
    log(f"{ask.case_id or ask.script} on {req.target}: {found.summary(also_between)}")
    log(
        f"runs made: {len(found.ran)} ({', '.join(found.ran) or 'none: all recorded'}); environments built: "
        f"{len(found.built)}"
    )
    return 1 if found.answer(also_between).kind == "undecided" else 0
