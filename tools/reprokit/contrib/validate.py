"""Check every input file: cases (schema, unique ids, standalone scripts, oracles, links), matrix, claims, sweep.

Each problem is one line naming the file, the field and what is allowed; nothing is run. Besides the schema, the
claim-judging rules of CONTRIBUTING.md that can be checked without a run: every exception class an oracle or a script
names exists in the installed torch (or builtins); a measurement case has fixed.py or says why none applies; a claim
about specific hardware is gated to it; a claim about the article's fix has article_fix.py; one claim per variant.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import re
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.contrib.oracle_checks import oracle_problems
from reprokit.contrib.oracle_history import recorded_message_problems
from reprokit.model.case import Case, load_case
from reprokit.model.claims import Claims, load_claims
from reprokit.model.matrix import Matrix, load_matrix
from reprokit.model.schema import InputError
from reprokit.run import sweep

PROJECT_PACKAGE = "reprokit"
# torch modules whose import defines the exception classes an oracle may name by their bare name.
TORCH_MODULES = ("torch", "torch._dynamo", "torch._dynamo.exc", "torch._inductor.exc", "torch.export",
                 "torch.fx.experimental.symbolic_shapes", "torch._subclasses.fake_tensor", "torch.distributed",
                 "torch.distributed.tensor", "torch.distributed.fsdp", "torch.utils._sympy.value_ranges")
# Words that make a claim one about specific hardware (rule 4).
HARDWARE_WORDS = re.compile(r"\b(A10|A100|H100|H200|RTX ?4090|MI300X|910B|NVLink|PCIe|NUMA)\b")


def script_problems(path: Path) -> list[str]:
    """A case script must parse and must not import the project's package (it has to paste into a bug report)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as err:
        return [f"{path}:{err.lineno}: does not parse ({err.msg})"]
    problems = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.split(".")[0] == PROJECT_PACKAGE:
                problems.append(f"{path}:{node.lineno}: imports {name}; case scripts must run with torch alone")
    return problems


@functools.cache
def torch_exception_names() -> frozenset[str]:
    """The bare names of every exception class builtins and the installed torch define (after importing its modules)."""
    for name in TORCH_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module this build lacks (e.g. no distributed) defines nothing to find
            continue
    found, todo = set(), [BaseException]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo += cls.__subclasses__()
    return frozenset(found)


def bare_exception_problem(where: str, name: str) -> str | None:
    if isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), BaseException):
        return None
    if importlib.util.find_spec("torch") is None or name in torch_exception_names():
        return None
    return (f"{where}: {name!r} is no exception class of builtins or of the installed torch; "
            "an oracle naming it could never match (use a class torch raises, or kind: nonzero-exit)")


def exception_problem(case_yaml: Path, dotted: str) -> str | None:
    """An oracle's exception must exist: a bare name in builtins or torch, a dotted one where its module imports."""
    if "." not in dotted:
        return bare_exception_problem(f"{case_yaml}: expect.repro.exception", dotted)
    module, _, attr = dotted.rpartition(".")
    if importlib.util.find_spec(module.split(".")[0]) is None:
        return None
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return f"{case_yaml}: expect.repro.exception: {dotted!r} does not resolve to a class"
    if not (isinstance(obj, type) and issubclass(obj, BaseException)):
        return f"{case_yaml}: expect.repro.exception: {dotted!r} is not an exception class"
    return None


def compared_class_names(path: Path) -> list[tuple[int, str]]:
    """String constants a script compares with a class's __name__ / __qualname__ that look like exception names."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(n, ast.Attribute) and n.attr in ("__name__", "__qualname__") for n in sides):
            continue
        for n in sides:
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"[A-Z]\w*(Error|Exception)",
                                                                                     n.value):
                found.append((node.lineno, n.value))
    return found


def claim_problems(path: Path, claims: Claims, case_dirs: dict[str, Path], matrix: Matrix | None) -> list[str]:
    """The claim rules validate can check without a run (rules 2, 4 and 7 of CONTRIBUTING.md)."""
    problems, used = [], {}
    for i, claim in enumerate(claims.claims):
        where = f"{path}: claims.{i} ({claim.id})"
        variant = "article_fix" if claim.article_fix else "repro"
        for case in claim.cases:
            if claim.article_fix and case in case_dirs and not (case_dirs[case] / "article_fix.py").exists():
                problems.append(f"{where}: article_fix: true, but cases/{case}/ has no article_fix.py")
            if (case, variant) in used:
                problems.append(f"{where}: cases/{case} {variant} already decides claim {used[case, variant]!r}; "
                                "one variant per claim (split the case)")
            used[case, variant] = claim.id
        named = HARDWARE_WORDS.findall(claim.claim)
        if named and not claim.untestable and claim.hardware is None and not (claim.untested and HARDWARE_WORDS.search(claim.untested)):
            problems.append(f"{where}: claim names hardware ({', '.join(sorted(set(named)))}); add hardware: "
                            "{needs, targets} (or say in untested that the hardware part is not tested)")
        if claim.hardware is not None and matrix is not None:
            for target in claim.hardware.targets:
                if target not in matrix.targets:
                    problems.append(f"{where}: hardware.targets: {target!r} is no target of matrix.yaml")
    return problems


def validate(root: Path, resolve_exceptions: bool = True) -> list[str]:
    problems: list[str] = []
    matrix = None
    try:
        matrix = load_matrix(root / "matrix.yaml")
    except InputError as err:
        problems.append(str(err))
    ids: dict[str, Path] = {}
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
        if not (yml.parent / "repro.py").exists():
            problems.append(f"{yml.parent}: repro.py is missing")
        problems += [p for name in case_files.EXTRA_FILES if (p := case_files.problem(yml.parent, name))]
        for script in sorted(yml.parent.glob("*.py")):
            problems += script_problems(script)
        oracles = [case.expect.repro, *(e.repro for e in case.overrides.values())]
        for oracle in oracles:
            if resolve_exceptions and oracle.exception and (p := exception_problem(yml, oracle.exception)):
                problems.append(p)
        if resolve_exceptions:
            for script in sorted(yml.parent.glob("*.py")):
                for line, name in compared_class_names(script):
                    if p := bare_exception_problem(f"{script}:{line}: compares a class name with", name):
                        problems.append(p)
        problems += oracle_problems(yml, case)
        article = case.article
        if article and article.stance == "measures" and not article.no_fix and not (yml.parent / "fixed.py").exists():
            problems.append(f"{yml}: article.stance: measures needs fixed.py or article.no_fix (why no fix applies)")
    problems += recorded_message_problems(root, loaded_cases)  # every release's recorded message, per oracle
    if (root / "claims.yaml").exists():
        try:
            claims = load_claims(root / "claims.yaml", set(ids))
            problems += claim_problems(root / "claims.yaml", claims, {k: v.parent for k, v in ids.items()}, matrix)
        except InputError as err:
            problems.append(str(err))
    sweep_dir = root / "sweep"
    if sweep_dir.is_dir():
        try:
            sweep.load_grid(sweep_dir / "grid.yaml")
        except InputError as err:
            problems.append(str(err))
        for model in sorted((sweep_dir / "models").glob("*.py")):
            tree = ast.parse(model.read_text(encoding="utf-8"))
            if not any(isinstance(n, ast.FunctionDef) and n.name == "build" for n in tree.body):
                problems.append(f"{model}: defines no build() returning (model, example_inputs)")
            sweep_id = "sweep-" + model.stem.replace("_", "-")
            if sweep_id in ids:
                problems.append(f"{model}: its id {sweep_id!r} collides with {ids[sweep_id]}")
    return problems
