"""Check every input file: cases (schema, unique ids, standalone scripts, oracles, links), matrix, claims, sweep.

Each problem is one line naming the file, the field and what is allowed; nothing is run.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

from . import sweep
from .schema import InputError, load_case, load_claims, load_matrix

PROJECT_PACKAGE = "reprokit"


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


def exception_problem(case_yaml: Path, dotted: str) -> str | None:
    """A dotted exception name must resolve when its top-level module is importable here (else: well-formed only)."""
    if "." not in dotted:
        return None
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


def validate(root: Path, resolve_exceptions: bool = True) -> list[str]:
    problems: list[str] = []
    try:
        load_matrix(root / "matrix.yaml")
    except InputError as err:
        problems.append(str(err))
    ids: dict[str, Path] = {}
    for yml in sorted((root / "cases").glob("*/case.yaml")):
        try:
            case = load_case(yml)
        except InputError as err:
            problems.append(str(err))
            continue
        if case.id in ids:
            problems.append(f"{yml}: id: {case.id!r} is also used by {ids[case.id]}")
        ids[case.id] = yml
        if not (yml.parent / "repro.py").exists():
            problems.append(f"{yml.parent}: repro.py is missing")
        for script in sorted(yml.parent.glob("*.py")):
            problems += script_problems(script)
        oracles = [case.expect.repro, *(e.repro for e in case.overrides.values())]
        for oracle in oracles:
            if resolve_exceptions and oracle.exception and (p := exception_problem(yml, oracle.exception)):
                problems.append(p)
    if (root / "claims.yaml").exists():
        try:
            load_claims(root / "claims.yaml", set(ids))
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
