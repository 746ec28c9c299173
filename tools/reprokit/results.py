"""Result records on disk.

While a run is going, every finished record is appended (and flushed) to `results.partial.jsonl`, so a killed run
loses nothing finished. When the run completes, `results.json` is replaced atomically and the journal removed;
a run that fails never touches an existing `results.json`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from .schema import InputError

SCHEMA_VERSION = 1


@dataclass
class Record:
    key: str  # case/variant@dtype
    case: str
    variant: str
    dtype: str
    verdict: str
    why: str
    status: str | None = None  # pass | fail | crash | timeout | oom; None when skipped
    exit_code: int | None = None
    signal: str | None = None
    exception: str | None = None
    message: str | None = None
    stage: str | None = None
    ladder: dict | None = None  # backend -> status, for failures whose stage the traceback does not tell
    dynamo: dict | None = None
    seconds: float = 0.0
    stderr_tail: str = ""
    stdout_tail: str = ""
    output_bytes: dict = field(default_factory=dict)
    confined: int | None = None  # the Landlock ABI that kept the run's writes in its own folder; None: not confined

    def headline(self) -> str:
        """The message's first informative line (a backend wrapper's "backend='inductor' raised:" is skipped)."""
        lines = [line.strip() for line in (self.message or "").splitlines() if line.strip()]
        while len(lines) > 1 and lines[0].endswith("raised:"):
            lines.pop(0)
        return lines[0] if lines else ""

    @classmethod
    def from_dict(cls, data: dict) -> Record:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class ResultSet:
    target: str
    run: dict
    environment: dict
    records: list[Record]

    def by_key(self) -> dict[str, Record]:
        return {r.key: r for r in self.records}

    def to_json(self) -> str:
        data = {"schema": SCHEMA_VERSION, "target": self.target, "run": self.run, "environment": self.environment,
                "records": [asdict(r) for r in sorted(self.records, key=lambda r: r.key)]}
        return json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"


def jobs_text(run: dict) -> str:
    """'12 jobs', or '3 sittings (15, 15, 1 jobs)' for a run continued with --resume."""
    sittings = run.get("sittings") or [run.get("jobs")]
    if len(sittings) == 1:
        return f"{sittings[0]} jobs"
    return f"{len(sittings)} sittings ({', '.join(str(j) for j in sittings)} jobs)"


def cache_text(run: dict) -> str:
    """'cold caches', or 'warm caches (DIR)' for a run made with --cache."""
    cache = str(run.get("cache", "cold"))
    return "cold caches" if cache == "cold" else f"**warm caches** {cache.removeprefix('warm ')}"


# The corpus of cases and the model sweep are two suites with separate files, read and written the same way.
SUITE_FILE = {"cases": "results", "sweep": "sweep"}


def results_path(out: Path, target: str, suite: str = "cases") -> Path:
    return out / target / f"{SUITE_FILE[suite]}.json"


def journal_path(out: Path, target: str, suite: str = "cases") -> Path:
    return out / target / f"{SUITE_FILE[suite]}.partial.jsonl"


def load(path: Path) -> ResultSet:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ResultSet(data["target"], data.get("run", {}), data.get("environment", {}),
                         [Record.from_dict(r) for r in data["records"]])
    except FileNotFoundError:
        raise InputError(f"{path}: no results yet (run `reprokit run --target {path.parent.name}` first)") from None
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise InputError(f"{path}: not a valid results file ({type(err).__name__}: {err}); "
                         "move it away or re-run without --resume") from None


def load_journal(path: Path) -> list[Record]:
    """Records of a run that was cut off; a torn last line (the kill landed mid-write) is ignored."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "key" in data:
            records.append(Record.from_dict(data))
    return records


class Journal:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def append(self, record: Record) -> None:
        self._fh.write(json.dumps(asdict(record), default=str) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def save(path: Path, results: ResultSet) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(results.to_json(), encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------- expected state (committed baseline)

def expected_path(root: Path, target: str, suite: str = "cases") -> Path:
    return root / "expected" / (f"{target}.yaml" if suite == "cases" else f"{target}-{suite}.yaml")


def load_expected(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        raise InputError(f"{path}: not valid YAML; restore it with `git checkout {path}`") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: must map run keys to verdicts, e.g. 'case/repro@float32: reproduces'")
    return data


def save_expected(path: Path, verdicts: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "# Committed expected verdicts: a run fails when any differs. Accept a change with --update-expected.\n"
    path.write_text(header + yaml.safe_dump(dict(sorted(verdicts.items())), sort_keys=True, width=200),
                    encoding="utf-8")
