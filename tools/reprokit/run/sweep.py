"""The model sweep as one more kind of case: each (structure, mode, config, dtype) cell is a CaseRun of sweep/cell.py.

A cell "reproduces" when torch.compile fails on the structure (an error or an accuracy failure), so the sweep goes
through the same runner, results and verdicts as the cases; its report reads them as pass rates.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reprokit.model.case import Case
from reprokit.model.case_identity import content_hash, sweep_structure_id, sweep_structures
from reprokit.model.corpus import CaseRun, skip_reason
from reprokit.model.matrix import Target
from reprokit.model.schema import DType, InputError, describe_error, read_yaml

Config = Literal["default", "fullgraph", "dynamic", "max-autotune", "max-autotune-no-cudagraphs"]


class Cell(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    mode: Literal["inference", "train"]
    config: Config
    dtypes: list[DType]
    fp8_recipes: list[Literal["tensorwise", "rowwise"]] = ["tensorwise"]  # torchao float8 recipes, for FP8 dtypes


class Smoke(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    models: list[str]
    cells: list[Cell]


class Grid(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    grids: dict[Literal["cpu", "cuda", "rocm", "npu"], list[Cell]] = Field(min_length=1)
    smoke: Smoke


def load_grid(path: Path) -> Grid:
    try:
        return Grid.model_validate(read_yaml(path))
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None


def structures(sweep_dir: Path) -> list[str]:
    return sweep_structures(sweep_dir)


def structure_case(name: str, sweep_dir: Path) -> Case:
    doc = (sweep_dir / "models" / f"{name}.py").read_text(encoding="utf-8").split('"""')
    title = doc[1].strip().splitlines()[0] if len(doc) > 2 else name
    return Case.model_validate(
        {
            "id": sweep_structure_id(name),
            "title": title,
            "category": "model-sweep",
            "article": {
                "section": "1",
                "claim": f"torch.compile fails on {name} (one of the 63.2%)",
                "stance": "fails",
            },
            "requires": {"timeout": 900},
            "expect": {"repro": {"kind": "nonzero-exit"}},
        }
    )


def imported_packages(model_file: Path, names: tuple[str, ...]) -> list[str]:
    """Which of the optional packages `names` a structure's module imports (read from its code, never run)."""
    found: set[str] = set()
    try:
        tree = ast.parse(model_file.read_text(encoding="utf-8"))
    except SyntaxError:  # the run itself then fails with the error, in eager as compiled: skipped by cell.py
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return sorted(found & set(names))


def missing_packages(model_file: Path, facts: dict) -> str | None:
    """A skip reason where the structure imports an optional package the run's Python lacks (facts["packages"]): its
    cells would fail before torch.compile is called, so they must not count as compile failures."""
    installed = facts.get("packages")
    if installed is None:  # facts read by an older runner: nothing known, nothing skipped
        return None
    missing = [name for name in imported_packages(model_file, tuple(installed)) if not installed[name]]
    return f"needs {', '.join(missing)}, not installed in this Python" if missing else None


def plan(
    sweep_dir: Path, target_name: str, target: Target, facts: dict, smoke: bool = False, models: list[str] | None = None
) -> list[CaseRun]:
    grid = load_grid(sweep_dir / "grid.yaml")
    kind = target.device.kind
    names = grid.smoke.models if smoke else structures(sweep_dir)
    if models:
        names = [n for n in names if n in models]
    cells = grid.smoke.cells if smoke else grid.grids.get(kind if kind in grid.grids else "cuda", [])
    runs, content = [], content_hash(sweep_dir)
    for name in names:
        case = structure_case(name, sweep_dir)
        lacking = missing_packages(sweep_dir / "models" / f"{name}.py", facts)
        for cell in cells:
            for dtype in cell.dtypes:
                if dtype not in target.dtypes:
                    continue
                reason = skip_reason(case, target_name, target, dtype, facts) or lacking
                if dtype.startswith("float8") and kind == "cuda" and (facts.get("compute_capability") or 0) < 8.9:
                    reason = reason or f"FP8 needs compute capability >= 8.9, found {facts.get('compute_capability')}"
                env = (("SWEEP_MODEL", name), ("SWEEP_MODE", cell.mode), ("SWEEP_CONFIG", cell.config))
                if not dtype.startswith("float8"):
                    runs.append(
                        CaseRun(case, sweep_dir / "cell.py", f"{cell.mode}-{cell.config}", dtype, reason, env, content)
                    )
                    continue
                for recipe in cell.fp8_recipes:  # one cell per torchao float8 recipe
                    runs.append(
                        CaseRun(
                            case,
                            sweep_dir / "cell.py",
                            f"{cell.mode}-{cell.config}-{recipe}",
                            dtype,
                            reason,
                            (*env, ("SWEEP_FP8_RECIPE", recipe)),
                            content,
                        )
                    )
    return runs
