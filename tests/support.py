"""Small builders shared by the tests: records and stores made in memory, the store a run wrote, and `reprokit` run
as a user runs it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from reprokit.model.records import Record
from reprokit.store.store import Store


def record(
    case="c",
    variant="repro",
    dtype="float32",
    verdict="reproduces",
    torch="2.13.0+cpu",
    target="cpu",
    suite="cases",
    recorded_at="2026-11-30T00:00:00Z",
    run_id="r1",
    **fields,
) -> Record:
    return Record(
        target=target,
        suite=suite,
        torch=torch,
        device="cpu",
        case=case,
        variant=variant,
        dtype=dtype,
        verdict=verdict,
        why=fields.pop("why", ""),
        run_id=run_id,
        recorded_at=recorded_at,
        reprokit="test",
        **fields,
    )


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


ROOT = Path(__file__).resolve().parents[1]
FLOAT64_GROUP = "float64-case"  # the xdist_group of the tests that share conftest.float64_case


def run_reprokit(
    root: Path, *args: str, env: dict | None = None, timeout: float | None = None, cwd: Path | str | None = None
) -> subprocess.CompletedProcess:
    """`reprokit --root ROOT ARGS` in a process of its own, from this checkout's package (`env`: variables added to
    this process's)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def empty_repository(folder: Path) -> Path:
    """A project holding this checkout's matrix.yaml and no case."""
    shutil.copy(ROOT / "matrix.yaml", folder / "matrix.yaml")
    (folder / "cases").mkdir()
    return folder


def interpreters(folder: Path, n: int) -> list[str]:
    """n environments of this interpreter's own torch, each its own folder (an interpreter given by path is a
    release to `run --torch` and to bisect): runs that cost no download."""
    base = Path(sys.prefix)
    found = []
    for i in range(n):
        env = folder / f"env{i}"
        (env / "bin").mkdir(parents=True)
        (env / "bin" / "python").symlink_to(Path(sys.executable))
        shutil.copy(base / "pyvenv.cfg", env / "pyvenv.cfg")
        (env / "lib").symlink_to(base / "lib")
        found.append(str(env / "bin" / "python"))
    return found


def uv_layout(cache: Path) -> tuple[Path, Path]:
    """uv's layout in small: 2.10.0 links its own 48 MB archive and a 16 MB one it shares with 2.11.0; the two
    archive folders (own, shared)."""
    archives = cache / "uv" / "archive-v0"
    own, shared = archives / "own-wheel", archives / "shared-wheel"
    for folder, size in ((own, 48 << 20), (shared, 16 << 20)):
        folder.mkdir(parents=True)
        (folder / "lib.so").write_bytes(os.urandom(size))
    for version, linked in (("2.10.0", (own, shared)), ("2.11.0", (shared,))):
        site = cache / "envs" / f"torch-{version}" / "lib"
        site.mkdir(parents=True)
        for archive in linked:
            os.link(archive / "lib.so", site / f"{archive.name}.so")
        (site.parent / ".complete").write_text(f"torch {version}\n")
    return own, shared


def venv_without_torch(folder: Path) -> Path:
    """A fresh environment with reprokit's dependencies and no torch, as after `pip install -e .`."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next((folder / "lib").glob("python3*/site-packages"))
    source = next((Path(sys.prefix) / "lib").glob("python3*/site-packages"))
    for entry in source.iterdir():
        if not entry.name.startswith(("torch", "functorch", "triton", "nvidia", "__editable__", "_reprokit")):
            (site / entry.name).symlink_to(entry)
    return folder / "bin" / "python"


def committed_files(*, outputs: bool = False, runs: bool = False) -> list[Path]:
    """The committed store's records files (with `outputs`, their output files too; with `runs`, the run headers'),
    never none: a check over every committed record passes vacuously when there is none to check."""
    files = [
        path
        for path in sorted((ROOT / "results").glob("*/*/*.jsonl"))
        if (outputs or not path.name.endswith(".output.jsonl")) and (runs or not path.name.endswith(".runs.jsonl"))
    ]
    assert len(files) >= 10, f"{ROOT / 'results'}: {len(files)} committed files; a check over them would be vacuous"
    return files
