"""Rule 3 of CONTRIBUTING.md (real names): every exception class an oracle names, or a script compares a class name
with, exists in builtins or in the cpu target's pinned torch (looked up in a contained child: exception_names.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from reprokit.contrib.exception_names import (
    BUILTIN_EXCEPTIONS,
    NamesUnknown,
    TorchNames,
    pinned_interpreter,
    torch_names,
    under_torch,
)
from reprokit.run.env_cache import cache_root


def bare_exception_problem(where: str, name: str, names: TorchNames | None) -> str | None:
    if name in BUILTIN_EXCEPTIONS or names is None or name in names.bare:
        return None
    return (
        f"{where}: {name!r} is no exception class of builtins or of the installed torch; "
        "an oracle naming it could never match (use a class torch raises, or kind: nonzero-exit)"
    )


def exception_problem(case_yaml: Path, dotted: str, names: TorchNames | None) -> str | None:
    """An oracle's exception must exist: a bare name in builtins or torch, a dotted one under `torch.` (or
    `builtins.`) where the torch under test has it. Nothing else is looked up (validate never imports a name)."""
    where = f"{case_yaml}: expect.repro.exception"
    if "." not in dotted:
        return bare_exception_problem(where, dotted, names)
    module, _, attr = dotted.rpartition(".")
    if module == "builtins":
        return None if attr in BUILTIN_EXCEPTIONS else f"{where}: {dotted!r} does not resolve to a class"
    if not under_torch(dotted):
        return (
            f"{where}: {dotted!r} is not under torch. or builtins; an oracle names torch's exception classes "
            "(or Python's), and validate looks up no other module"
        )
    found = "class" if names is None else names.dotted.get(dotted, "missing")
    if found == "missing":
        return f"{where}: {dotted!r} does not resolve to a class"
    if found != "class":
        return f"{where}: {dotted!r} is not an exception class"
    return None


def name_problems(named: list[tuple[str, str, bool]], root: Path, pin: str | None) -> list[str]:
    """Rule 3 (real names) for every (where, name, by an oracle): an oracle's exception (where is its case.yaml) or a class name a
    script compares with (bare), against the cpu target's pinned torch (`pin`; this interpreter's torch where the
    matrix names none), asked in a contained child process. Where that torch is not here, the names are not checked,
    and that is a problem: validate never says valid of what it did not look up."""
    if not named:
        return []
    python = pinned_interpreter(pin) if pin else sys.executable
    try:
        names = torch_names({n for _, n, _ in named if under_torch(n)}, python=python, root=root) if python else None
    except NamesUnknown as err:
        return [f"{root}: exception names: {err}"]
    if names is None:
        unchecked = sorted({n for _, n, _ in named if n not in BUILTIN_EXCEPTIONS and not n.startswith("builtins.")})
        here = own_torch_words()
        return [
            f"{root}: exception names: {len(unchecked)} not checked ({', '.join(unchecked[:3])}"
            f"{', ...' if len(unchecked) > 3 else ''}): "
            + (
                f"the cpu target's pinned torch {pin} is not installed here ({here}) nor built in "
                f"{cache_root() / 'envs'}; install torch=={pin} (`nox -s validate` does)"
                if pin
                else f"no torch is importable here ({sys.executable}); install the cpu target's pinned torch"
            )
        ]
    problems = []
    for where, name, oracle in named:
        if oracle:
            problem = exception_problem(Path(where), name, names)
        else:
            problem = bare_exception_problem(where, name, names)
        problems += [problem] if problem else []
    return problems


def own_torch_words() -> str:
    from importlib import metadata

    try:
        return f"{sys.executable} has torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        return f"{sys.executable} has no torch"
