"""One `reprokit run`: every option merged once into a frozen `RunRequest`, what it ended with (`RunOutcome`), and
the matrix and target it names."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reprokit.model.matrix import Matrix, Target, load_matrix
from reprokit.model.records import Record
from reprokit.model.schema import InputError
from reprokit.store import expected
from reprokit.store.store import Loaded

Suite = Literal["cases", "sweep"]


class RunRequest(BaseModel):
    """Every option of one `reprokit run`, merged once; a container run receives it whole."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    root: Path
    target: str
    suite: Suite = "cases"
    cases: list[str] = []
    dtypes: list[str] = []  # only the runs of these dtypes (e.g. the sweep's float8_e4m3fn cells); empty: all
    smoke: bool = False
    shard: str | None = None
    jobs: int = os.cpu_count() or 1
    jobs_per_gpu: int | None = None  # runs at once on one accelerator; None: no cap beyond jobs (devices.py)
    timeout: float | None = None
    out: Path | None = None  # results store and reports under out/results and out/reports instead of the root's
    cache: Path | None = None
    resume: bool = False
    update_expected: bool = False
    where: Literal["auto", "host", "container"] = "auto"
    base_image: str | None = None
    base_python: str | None = None  # the Python (X.Y) of --base-image, when it is not matrix.yaml's python
    wheelhouse: Path | None = None
    force: bool = False
    deadline: float | None = None
    warm: bool = False
    render: bool = True
    ladder: bool = True
    python: str | None = None  # the interpreter that runs the cases (needs torch); None: this one
    torch: str | None = None  # run this torch release in its own environment (torch_envs.py); "nightly" too
    skip_recorded: bool = False  # skip runs recorded for this torch with the same case content (the history)
    torch_index: str | None = None  # the index --torch installs from (e.g. the nightly index); None: the target's
    repeat: int = Field(default=1, ge=1, le=50)  # runs of each variant; runs that disagree are recorded as flaky

    @property
    def interpreter(self) -> str:
        return self.python or sys.executable

    @property
    def store_dir(self) -> Path:
        return (self.out or self.root) / "results"

    @property
    def reports_dir(self) -> Path:
        return self.out / "reports" if self.out else self.root / "reports"


@dataclass
class RunOutcome:
    records: list[Record] = field(default_factory=list)  # what this invocation recorded
    interrupted: bool = False
    not_started: int = 0
    gate: expected.Gate | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.gate is not None and (self.gate.failed or self.gate.refused) else 0


@dataclass
class Ran:
    """What a host or container run hands back to the lifecycle: settle=True renders the reports from `loaded` and
    gates `recorded` against the expected state (an interrupted host run does neither)."""

    outcome: RunOutcome
    loaded: Loaded
    recorded: list[Record]
    mismatch: str | None
    settle: bool = True


def target_of(matrix: Matrix, name: str) -> Target:
    if name not in matrix.targets:
        raise InputError(f"--target {name!r}: unknown target; matrix.yaml has {', '.join(matrix.targets)}")
    return matrix.targets[name]


def load_root_matrix(root: Path) -> Matrix:
    if not (root / "matrix.yaml").exists():
        raise InputError(
            f"{root}: no matrix.yaml here or in a folder above (run from inside the repository or pass --root)"
        )
    return load_matrix(root / "matrix.yaml")


def shown_path(path: Path, root: Path) -> Path:
    """A path as a log line shows it: relative to the repository root when inside it."""
    return path.relative_to(root) if path.is_relative_to(root) else path
