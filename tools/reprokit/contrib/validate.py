"""Check every input file: cases (schema, unique ids, standalone scripts, oracles, links), matrix, claims, sweep.

Each problem is one line naming the file, the field and what is allowed; no case code is run and nothing a case
names is imported here. Besides the schema, the claim-judging rules of CONTRIBUTING.md that can be checked without a
run: every exception class an oracle or a script names exists in the installed torch (or builtins: asked in a
contained child process, contrib/exception_names.py); a measurement case has fixed.py or says why none applies; a claim
about specific hardware is gated to it; a claim about the article's fix has article_fix.py; one claim per variant.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.contrib.exception_names import (
    BUILTIN_EXCEPTIONS,
    NamesUnknown,
    TorchNames,
    pinned_interpreter,
    torch_names,
    under_torch,
)
from reprokit.contrib.oracle_checks import oracle_problems
from reprokit.contrib.oracle_history import recorded_message_problems
from reprokit.model import corpus
from reprokit.model.case import Case, load_case
from reprokit.model.claims import Claims, load_claims
from reprokit.model.matrix import Matrix, load_matrix
from reprokit.model.schema import InputError
from reprokit.run import sweep
from reprokit.run.env_cache import cache_root

PROJECT_PACKAGE = "reprokit"
# Words that make a claim one about specific hardware (rule 4).
HARDWARE_WORDS = re.compile(r"\b(A10|A100|H100|H200|RTX ?4090|MI300X|910B|NVLink|PCIe|NUMA)\b")


SCRIPT_CAP = 1 << 20  # bytes of a case script validate reads: a repro is a few KB


class NotAScript(Exception):
    """A case's `*.py` that is no regular file of at most SCRIPT_CAP bytes (a link, a FIFO, a device, a flood)."""


def script_text(path: Path) -> str:
    """The script's text, opened as untrusted: never through a link (O_NOFOLLOW: a `repro.py` linked to
    /proc/self/environ or /dev/zero), regular files only (O_NONBLOCK: a FIFO never blocks), at most SCRIPT_CAP bytes."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise NotAScript(
            f"{path}: cannot be opened as a regular file ({err.strerror}); case files are regular files, never links"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAScript(f"{path}: not a regular file; case files are regular files")
        if info.st_size > SCRIPT_CAP:
            raise NotAScript(f"{path}: {info.st_size} bytes; a case script is at most {SCRIPT_CAP} bytes")
        data = os.read(fd, SCRIPT_CAP + 1)
    finally:
        os.close(fd)
    if len(data) > SCRIPT_CAP:
        raise NotAScript(f"{path}: more than {SCRIPT_CAP} bytes; a case script is at most {SCRIPT_CAP} bytes")
    return data.decode("utf-8", "replace")


def script_problems(path: Path) -> list[str]:
    """A case script must parse and must not import the project's package (it has to paste into a bug report)."""
    try:
        tree = ast.parse(script_text(path), filename=str(path))
    except NotAScript as err:
        return [str(err)]
    except SyntaxError as err:
        return [f"{path}:{err.lineno}: does not parse ({err.msg})"]
    except (RecursionError, MemoryError):
        return [f"{path}: an expression is nested too deeply for Python to read it"]
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] == PROJECT_PACKAGE:
                problems.append(f"{path}:{node.lineno}: imports {name}; case scripts must run with torch alone")
    return problems


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


def compared_class_names(path: Path) -> list[tuple[int, str]]:
    """String constants a script compares with a class's __name__ / __qualname__ that look like exception names."""
    try:
        tree = ast.parse(script_text(path))
    except (NotAScript, SyntaxError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(n, ast.Attribute) and n.attr in ("__name__", "__qualname__") for n in sides):
            continue
        for n in sides:
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and re.fullmatch(r"[A-Z]\w*(Error|Exception)", n.value)
            ):
                found.append((node.lineno, n.value))
    return found


def claim_problems(path: Path, claims: Claims, case_dirs: dict[str, Path], matrix: Matrix | None) -> list[str]:
    """The claim rules validate can check without a run (rules 2, 4 and 7 of CONTRIBUTING.md)."""
    problems: list[str] = []
    used: dict[tuple[str, str], str] = {}  # (case, variant) -> the claim that tests it
    for i, claim in enumerate(claims.claims):
        where = f"{path}: claims.{i} ({claim.id})"
        variant = "article_fix" if claim.article_fix else "repro"
        for case in claim.cases:
            if claim.article_fix and case in case_dirs and not (case_dirs[case] / "article_fix.py").exists():
                problems.append(f"{where}: article_fix: true, but cases/{case}/ has no article_fix.py")
            if (case, variant) in used:
                problems.append(
                    f"{where}: cases/{case} {variant} already decides claim {used[case, variant]!r}; "
                    "one variant per claim (split the case)"
                )
            used[case, variant] = claim.id
        named = HARDWARE_WORDS.findall(claim.claim)
        if (
            named
            and not claim.untestable
            and claim.hardware is None
            and not (claim.untested and HARDWARE_WORDS.search(claim.untested))
        ):
            problems.append(
                f"{where}: claim names hardware ({', '.join(sorted(set(named)))}); add hardware: "
                "{needs, targets} (or say in untested that the hardware part is not tested)"
            )
        if claim.hardware is not None and matrix is not None:
            for target in claim.hardware.targets:
                if target not in matrix.targets:
                    problems.append(f"{where}: hardware.targets: {target!r} is no target of matrix.yaml")
    return problems


def case_problems(yml: Path, case, named: list[tuple[str, str, bool]]) -> list[str]:
    """One case folder's problems; the exception names it uses are added to `named` ((where, name, named by an
    oracle)), checked later for every case at once (one contained run of the torch under test)."""
    if undecodable := corpus.not_text(yml.parent):  # nothing else of it is read: the site leaves it out too
        return undecodable
    problems = []
    if not (yml.parent / "repro.py").exists():
        problems.append(f"{yml.parent}: repro.py is missing")
    problems += [p for name in case_files.EXTRA_FILES if (p := case_files.problem(yml.parent, name))]
    for script in sorted(yml.parent.glob("*.py")):
        problems += script_problems(script)
        named += [
            (f"{script}:{line}: compares a class name with", name, False) for line, name in compared_class_names(script)
        ]
    named += [
        (str(yml), o.exception, True)
        for o in [case.expect.repro, *(e.repro for e in case.overrides.values())]
        if o.exception
    ]
    problems += oracle_problems(yml, case)
    article = case.article
    if article and article.stance == "measures" and not article.no_fix and not (yml.parent / "fixed.py").exists():
        problems.append(f"{yml}: article.stance: measures needs fixed.py or article.no_fix (why no fix applies)")
    return problems


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


def sweep_problems(sweep_dir: Path, ids: dict[str, Path]) -> list[str]:
    problems = []
    try:
        sweep.load_grid(sweep_dir / "grid.yaml")
    except InputError as err:
        problems.append(str(err))
    for model in sorted((sweep_dir / "models").glob("*.py")):
        try:
            tree = ast.parse(script_text(model))
        except (NotAScript, SyntaxError) as err:
            problems.append(str(err) if isinstance(err, NotAScript) else f"{model}:{err.lineno}: does not parse")
            continue
        if not any(isinstance(n, ast.FunctionDef) and n.name == "build" for n in tree.body):
            problems.append(f"{model}: defines no build() returning (model, example_inputs)")
        sweep_id = "sweep-" + model.stem.replace("_", "-")
        if sweep_id in ids:
            problems.append(f"{model}: its id {sweep_id!r} collides with {ids[sweep_id]}")
    return problems


def validate(root: Path, resolve_exceptions: bool = True) -> list[str]:
    problems: list[str] = []
    matrix = None
    try:
        matrix = load_matrix(root / "matrix.yaml")
    except InputError as err:
        problems.append(str(err))
    ids: dict[str, Path] = {}
    named: list[tuple[str, str, bool]] = []
    loaded_cases: dict[str, tuple[Path, Case]] = {}
    for yml in sorted((root / "cases").glob("*/case.yaml")):
        try:
            case = load_case(yml)
        except InputError as err:
            problems.append(str(err))
            continue
        if case.id in ids:
            problems.append(f"{yml}: id: {case.id!r} is also used by {ids[case.id]}")
        ids[case.id] = yml
        loaded_cases[case.id] = (yml, case)
        problems += case_problems(yml, case, named)
    if resolve_exceptions:
        cpu = matrix.targets.get("cpu") if matrix is not None else None
        problems += name_problems(named, root, cpu.pins.torch if cpu is not None else None)
    problems += recorded_message_problems(root, loaded_cases)  # every release's recorded message, per oracle
    if (root / "claims.yaml").exists():
        try:
            claims = load_claims(root / "claims.yaml", set(ids))
            problems += claim_problems(root / "claims.yaml", claims, {k: v.parent for k, v in ids.items()}, matrix)
        except InputError as err:
            problems.append(str(err))
    if (root / "sweep").is_dir():
        problems += sweep_problems(root / "sweep", ids)
    return problems
