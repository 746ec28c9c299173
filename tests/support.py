"""Small builders shared by the tests: records and stores made in memory, and the store a run wrote."""
from pathlib import Path

from reprokit.model.records import Record
from reprokit.store.store import Store


def record(case="c", variant="repro", dtype="float32", verdict="reproduces", torch="2.13.0+cpu", target="cpu",
           suite="cases", recorded_at="2026-11-30T00:00:00Z", run_id="r1", **fields) -> Record:
    return Record(target=target, suite=suite, torch=torch, device="cpu", case=case, variant=variant, dtype=dtype,
                  verdict=verdict, why=fields.pop("why", ""), run_id=run_id, recorded_at=recorded_at,
                  reprokit="test", **fields)


def stored(folder: Path, target: str | None = None, suite: str | None = None) -> list[Record]:
    """The records of the store under folder/results (a repository root or an --out folder)."""
    return Store(folder / "results").load(target, suite).records


def case_script(tmp_path: Path, source: str, name: str = "repro.py") -> Path:
    """A case folder holding one script, readable by the user a root runner drops the case to."""
    folder = tmp_path / "case"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    path = folder / name
    path.write_text(source)
    path.chmod(0o644)
    return path
