"""Discover cases, select them, and expand them into runs (case x variant x dtype) for one target."""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.case import Case, load_case
from reprokit.model.case_identity import content_hash
from reprokit.model.matrix import Target, device_supports
from reprokit.model.schema import InputError

# Script file -> variant name. `repro` is the failing pattern; the others are fixes.
VARIANTS = {"repro.py": "repro", "fixed.py": "fixed", "article_fix.py": "article_fix"}
FIX_VARIANTS = ("fixed", "article_fix")
DEVICE_STRING = {"cpu": "cpu", "cuda": "cuda", "rocm": "cuda", "npu": "npu"}  # torch device per device kind


@dataclass(frozen=True)
class CaseDir:
    case: Case
    path: Path

    def variants(self) -> list[str]:
        return [v for f, v in VARIANTS.items() if (self.path / f).is_file()]

    def script(self, variant: str) -> Path:
        return self.path / {v: f for f, v in VARIANTS.items()}[variant]

    @property
    def own_dtype(self) -> str | None:
        """The dtype the case's scripts fix themselves: requires.dtypes one dtype other than float32 (as new-case
        writes it from the code) and no script reads REPRO_DTYPE; else None (the case runs in the dtypes a target
        tests, those of requires.dtypes)."""
        dtypes = self.case.requires.dtypes
        if len(dtypes) != 1 or dtypes[0] == "float32":
            return None
        reads = any(b"REPRO_DTYPE" in self.script(v).read_bytes() for v in self.variants())
        return None if reads else dtypes[0]


@dataclass(frozen=True)
class CaseRun:
    """One (case, variant, dtype) to run on one target; `skip` says why it will not run."""

    case: Case
    script: Path
    variant: str
    dtype: str
    skip: str | None = None
    env: tuple[tuple[str, str], ...] = ()  # extra environment (the sweep's cell parameters)
    content: str = ""  # hash of the files the run depends on: a changed case is run again (--skip-recorded)

    @property
    def key(self) -> str:
        return f"{self.case.id}/{self.variant}@{self.dtype}"


def _check_files(folder: Path, cases_dir: Path) -> None:
    """A case folder and its scripts are real files inside cases/: a link could run or publish anything."""
    if folder.is_symlink() or folder.resolve().parent != cases_dir.resolve():
        raise InputError(f"{folder}: a case folder must be a folder inside {cases_dir}, not a link")
    for name in ("case.yaml", *VARIANTS):
        path = folder / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise InputError(f"{path}: must be a regular file, not a link")
    if not (folder / "repro.py").is_file():
        raise InputError(f"{folder}: repro.py is missing (every case needs its failing script)")
    if bad := not_text(folder):
        raise InputError(bad[0])


TEXT_CAP = 4 << 20  # bytes of a case file read to check it (scripts are capped at 1 MB where they are read)


def not_text(folder: Path) -> list[str]:
    """Why each regular file directly in a case folder is not UTF-8 text (the site, the reports and `validate` read
    them as such; one undecodable byte stopped the whole site), one line each; links and others are not opened."""
    problems = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as err:
        return [f"{folder}: cannot be read ({err.strerror})"]
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            data = os.read(fd, TEXT_CAP) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        finally:
            os.close(fd)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            if err.start < TEXT_CAP - 4:  # not a character cut at the cap
                problems.append(f"{entry.path}: not UTF-8 (byte {err.start}); case files are UTF-8 text")
    return problems


def discover(cases_dir: Path, on_error=None) -> list[CaseDir]:
    """Every case under cases_dir. A bad case raises InputError, or with on_error(message) is reported and skipped
    (`run` and `list` go on with the others; `validate` fails on it)."""
    if not cases_dir.is_dir():
        raise InputError(f"{cases_dir}: no such cases folder")
    found = []
    for yml in sorted(cases_dir.glob("*/case.yaml")):
        try:
            _check_files(yml.parent, cases_dir)
            found.append(CaseDir(load_case(yml), yml.parent))
        except InputError as err:
            if on_error is None:
                raise
            on_error(f"skipped: {err}")
    return found


def select(cases: list[CaseDir], patterns: list[str]) -> list[CaseDir]:
    if not patterns:
        return cases
    chosen = [c for c in cases if any(fnmatch.fnmatchcase(c.case.id, p) for p in patterns)]
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(c.case.id, p) for c in cases)]
    if unmatched:
        raise InputError(f"--case {unmatched[0]!r}: no case matches (see `reprokit list`)")
    return chosen


def listing(cases_dir: Path, patterns: list[str]) -> tuple[list[str], list[str]]:
    """`reprokit list`: one line per selected case (id, category, variants), and the cases skipped as unreadable."""
    skipped: list[str] = []
    lines = [
        f"{cd.case.id:40} {cd.case.category:18} {' '.join(cd.variants())}"
        for cd in select(discover(cases_dir, on_error=skipped.append), patterns)
    ]
    return lines, skipped


def changed_since(root: Path, base: str) -> list[str]:
    """The ids of the cases whose folder differs from git ref `base` and still exists, sorted: what a pull request
    runs on every release (`reprokit changed-cases`)."""
    import subprocess

    proc = subprocess.run(
        ["git", "diff", "--name-only", f"{base}...HEAD", "--", "cases/"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise InputError(f"git diff {base}...HEAD: {(proc.stderr.strip().splitlines() or ['failed'])[-1]}")
    present = {c.case.id for c in discover(root / "cases")}
    return sorted({Path(p).parts[1] for p in proc.stdout.splitlines() if len(Path(p).parts) > 2} & present)


def shard(runs: list[CaseRun], spec: str | None) -> list[CaseRun]:
    """`i/n`: the i-th of n deterministic slices (1-based), cut by case so a case's variants stay together."""
    if not spec:
        return runs
    try:
        i, n = (int(x) for x in spec.split("/"))
        assert 1 <= i <= n
    except (ValueError, AssertionError):
        raise InputError(f"--shard {spec!r}: must be i/n with 1 <= i <= n, e.g. 1/4") from None
    ids = sorted({r.case.id for r in runs})
    mine = set(ids[i - 1 :: n])
    return [r for r in runs if r.case.id in mine]


def run_kind(target: Target, facts: dict) -> str:
    """The device kind runs use: the target's, or the CPU on a machine without any accelerator (a run forced there)."""
    return "cpu" if facts.get("device_kind") == "cpu" else target.device.kind


def runs_in(target: Target, dtype: str, own_dtype: str | None) -> bool:
    """Whether `target` runs a case in `dtype`: a dtype the target tests, or the case's own dtype (CaseDir.own_dtype)
    wherever the target's device computes in it (a float64 bug on a GPU target that tests no float64 is still one)."""
    return dtype in target.dtypes or (dtype == own_dtype and device_supports(target.device, dtype))


def skip_reason(
    case: Case, target_name: str, target: Target, dtype: str, facts: dict, own_dtype: str | None = None
) -> str | None:
    req, kind = case.requires, target.device.kind
    if run_kind(target, facts) == "cpu" and "cpu" in req.devices:
        kind = "cpu"  # forced onto a machine without the target's accelerator: what runs on a CPU runs there
    if kind not in req.devices:
        return f"runs on {'/'.join(req.devices)} only; target {target_name} is {kind}"
    if not runs_in(target, dtype, own_dtype):
        return f"target {target_name} does not test {dtype}" + (
            " and its device does not compute in it" if own_dtype == dtype else ""
        )
    if req.torch and facts.get("torch"):
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        if not SpecifierSet(req.torch).contains(Version(facts["torch"]).public, prereleases=True):
            return f"needs torch {req.torch}, found {facts['torch']}"
    if kind == "cpu":
        return None
    found = facts.get("device_count", 0)
    label = kind.upper() if kind != "rocm" else "ROCm"
    need = max(req.min_devices, req.world_size)
    if found < need:
        return f"needs {need} {label} device{'s' if need > 1 else ''}, found {found}"
    cc = facts.get("compute_capability")
    if req.min_compute_capability and kind == "cuda" and (cc is None or cc < req.min_compute_capability):
        return f"needs compute capability >= {req.min_compute_capability}, found {cc}"
    return None


def plan(cases: list[CaseDir], target_name: str, target: Target, facts: dict) -> list[CaseRun]:
    runs = []
    for cd in cases:
        content, own = content_hash(cd.path), cd.own_dtype
        for variant in cd.variants():
            for dtype in cd.case.requires.dtypes:
                reason = skip_reason(cd.case, target_name, target, dtype, facts, own)
                runs.append(CaseRun(cd.case, cd.script(variant), variant, dtype, reason, content=content))
    return runs
