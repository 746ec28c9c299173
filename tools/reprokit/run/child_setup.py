"""What a run's child process is given: an environment from an allow-list, the user it runs as, the containment it
asks contain.py for, and the shared header folder."""

from __future__ import annotations

import atexit
import json
import os
import pwd
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.child import LANDLOCK, PROBE, STAGES
from reprokit.child.keeper import FAILURES, KeeperConfig, KeeperReport
from reprokit.model.untrusted_text import contained_facts
from reprokit.run.untrusted_files import UntrustedFile, read_untrusted

FILE_CAP = 2 << 30  # the largest file a run may write (its output goes through pipes, counted, not stored)
# What one run may use at most (REPROKIT_DISK_BUDGET, REPROKIT_MEMORY_BUDGET override them: bytes, or with K/M/G):
# its folder and /dev/shm as size-limited tmpfs (as root), all its processes in one memory cgroup (where one can be
# made). The corpus's largest CPU run writes a few hundred MB of compile caches and peaks under 4 GiB.
DISK_BUDGET = 4 << 30
CACHE_BUDGET = 2 << 30  # each host folder a run writes (--cache, TORCH_TRACE), inside bubblewrap
CACHE_FILES = 20_000  # and its files: an inductor and Triton cache of the corpus's largest case holds a few thousand
COPY_OUT_FLOOR = 20 << 20  # bytes a second copy-out is given at least (the disk does 10x that): its own time limit
COPY_OUT_GRACE = 30  # seconds past that limit before the runner kills a keeper that did not stop itself
MEMORY_BUDGET = 8 << 30
PIDS_BUDGET = 4096  # processes and threads of a run at once (a torchrun case: two ranks, each a few dozen threads)


def budget(name: str, default: int, env: dict[str, str] | None = None) -> int:
    """A budget in bytes (or a count) from the runner's environment (e.g. REPROKIT_MEMORY_BUDGET=512M), else the
    default."""
    text = (env if env is not None else os.environ).get(name, "").strip().upper()
    match = re.fullmatch(r"(\d+)([KMG]?)I?B?", text)
    if not match:
        return default
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[match.group(2)]


# Variables passed through from the runner's environment, by exact name; everything else is dropped (a prefix such as
# TORCH_ or NCCL_ let any variable through: TORCH_LOGS, a runner's NCCL_* credentials-bearing settings, REPRO_ set by
# a caller). What a run needs beyond these (REPRO_DEVICE, REPRO_DTYPE, a sweep cell's parameters, cache folders) the
# runner sets itself from the plan.
ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CUDA_HOME",
    "ROCM_PATH",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCEND_OPP_PATH",
    # which devices the run may use (set by the scheduler or the container runtime)
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    # how a host's collectives reach each other (its interfaces; InfiniBand or P2P switched off)
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_DISABLE",
    "NCCL_P2P_DISABLE",
    "GLOO_SOCKET_IFNAME",
)


# Always on: NVLink multicast off (a program using it can take a shared host's GPUs down); unbuffered output;
# PYTHONSAFEPATH (python -P): no module of the case's folder (or probe.py's) is importable before the probe has
# confined writes (probe.py then drops it and puts the script's folder first on sys.path, as `python repro.py` does).
FIXED_ENV = {
    "PYTHONSAFEPATH": "1",
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


_shared_headers: Path | None = None


def shared_header_dir() -> Path:
    """One folder per runner process for inductor's precompiled C++ headers, shared by all its runs.

    Torch keeps these in $TMPDIR/torchinductor_<user>/precompiled_headers on purpose "global, rather than ignored by
    fresh_cache" (torch/_inductor/codecache.py): they depend only on torch, the compiler and its flags, are keyed by
    the preprocessed header's hash and guarded by file locks. A private $TMPDIR per run would rebuild them every run
    (about 5 s on 2 cores, most of the harness's cost on a CPU compile); a bare `python repro.py` reuses /tmp's.
    Nothing of the case's own code is shared: its kernels and FX graphs stay in the run's private cache.
    """
    global _shared_headers
    if _shared_headers is None:
        _shared_headers = Path(tempfile.mkdtemp(prefix="reprokit-headers-"))
        atexit.register(shutil.rmtree, _shared_headers, ignore_errors=True)
    return _shared_headers


def case_user() -> tuple[int, int] | None:
    """The uid and gid a root runner runs cases as (nobody: a case needs no root); None when not root."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def write_readable_script(path: Path, text: str = "", copy_of: Path | None = None) -> Path:
    """Write `text` (or copy the file `copy_of`) to `path`, readable by the case's user: a runner as root drops the
    child to another uid (case_user), which must read the script and pass through its folder, never write either.
    The folder must exist."""
    path.parent.chmod(0o755)
    if copy_of is not None:
        shutil.copyfile(copy_of, path)
    else:
        path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return path


def _user_name() -> str:
    """The name torch's getpass.getuser() finds in the child (which gets no USER/LOGNAME): the passwd entry's."""
    uid = (case_user() or (os.getuid(),))[0]
    try:
        return re.sub(r'[\\/:*?"<>|]', "_", pwd.getpwuid(uid).pw_name)
    except KeyError:
        return f"uid_{uid}"


def contain_config(
    python: str,
    script: Path,
    workdir: Path,
    private: Path,
    env: dict[str, str],
    writable: tuple[Path, ...] = (),
    ranks: int = 1,
) -> KeeperConfig:
    """What contain.py needs for one run; as root, the run's folders are handed to the case user first.

    `needs`: the paths the case must reach as that user (the interpreter's prefix and search path, probe.py, the
    case's folder, the run's folders); in the run's mount namespace a folder above one that the user cannot enter is
    replaced by one holding only the way to these (contain.py)."""
    user = case_user()
    reports = private / "reports"
    reports.mkdir(mode=0o755)
    for rank in range(max(1, ranks)):  # the runner's files: the case may write them once (the probe), never read,
        report = reports / f"probe-{rank}.json"  # chmod, utime or replace them (Landlock keeps the script out)
        os.close(os.open(report, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        os.chmod(report, 0o622 if user is not None else 0o600)
    config: KeeperConfig = {
        "held": str(private / "held.json"),
        "workdir": str(workdir),
        "reports": str(reports),
        "disk_budget": budget("REPROKIT_DISK_BUDGET", DISK_BUDGET),
        "memory_budget": budget("REPROKIT_MEMORY_BUDGET", MEMORY_BUDGET),
        "pids_budget": budget("REPROKIT_PIDS_BUDGET", PIDS_BUDGET),
        # host folders the run writes (a --cache folder, a TORCH_TRACE folder): inside bubblewrap a tmpfs of
        # this size each, copied out when the run ends (child/outbox.py)
        "cache_budget": budget("REPROKIT_CACHE_BUDGET", CACHE_BUDGET),
        "budgeted": list(map(str, writable)),
        "cache_files": budget("REPROKIT_CACHE_FILES", CACHE_FILES),
        "copy_out_seconds": 0.0,
        "budgeted_fds": [],
        "rw": [str(reports), *map(str, writable), *([str(shared_header_dir())] if user is None else [])],
        "needs": [],
        "uid": None,
        "gid": None,
        "key_fd": None,
        "parent": None,
        "bwrap": None,
        "container": False,
    }
    config["copy_out_seconds"] = copy_out_limit(config)
    needs = {
        str(Path(python).absolute().parent.parent),
        str(Path(python).resolve().parent.parent),
        str(PROBE),
        str(LANDLOCK),
        str(STAGES),
        str(script.parent.absolute()),
        str(workdir),
        str(reports),
        str(shared_header_dir()),
        *map(str, writable),
    }
    if Path(python).absolute() == Path(sys.executable).absolute():  # the interpreter's search path: site-packages
        needs.update(p for p in (sys.prefix, sys.base_prefix, *sys.path) if p and os.path.isabs(p))
    # Not PATH: the runner's own tool folders (some under root's home) are none of the case's business.
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "ROCM_PATH", "LD_LIBRARY_PATH", "PYTHONPATH"):
        needs.update(p for p in env.get(name, "").split(os.pathsep) if os.path.isabs(p))
    held = (workdir.absolute(), reports.absolute(), *(Path(w).absolute() for w in writable))
    config["needs"] = sorted(p for p in needs if os.path.exists(p) and not _beyond_the_run(Path(p), script, held))
    if user is None:
        return config
    uid, gid = user
    # Not the budgeted host folders: the case writes a tmpfs over each; on the host they stay the runner's, so that
    # no host process of the case's user can plant cache code the next run loads.
    for folder in (workdir, shared_header_dir()):
        for path in [folder, *(folder.rglob("*") if folder == workdir else ())]:
            os.lchown(path, uid, gid)
    config["uid"], config["gid"] = uid, gid
    return config


def _beyond_the_run(path: Path, script: Path, held: tuple[Path, ...] = ()) -> bool:
    """A path on the search path that would show the case more than it needs: a folder holding this package or a
    checkout (`.git`), one above the case's folder (other cases, the repository), or one above a folder the run
    writes (`held`: its working folder, reports, caches), which bound read-only would cover them (the runner's working
    directory, /tmp, is on its search path under `python -m`). The case's own folder is always bound: a folder the run
    writes inside it (the fp64 check's captures) is bound after it, over it."""
    case = script.parent.absolute()
    package = (path / "reprokit").exists() and path.name not in ("site-packages", "dist-packages")  # a source tree
    above = path != case and any(path != h and h.is_relative_to(path) for h in (case, *held))
    return package or (path / ".git").exists() or above


@dataclass(frozen=True)
class CopyOut:
    """What the keeper copied out of a run's budgeted host folders (child/outbox.py), after the case ended."""

    files: int
    bytes: int
    seconds: float  # from the case's end to the last file written: not part of the case's time or its timeout
    not_copied: tuple[tuple[str, str], ...]  # (path, why), the first 100
    more_not_copied: int = 0
    failed: str | None = None  # the keeper's copy-out stopped on an error of its own (recorded, never raised)

    @property
    def not_copied_count(self) -> int:
        return len(self.not_copied) + self.more_not_copied


def copy_out_limit(config: KeeperConfig) -> float:
    """Seconds a run's copy-out may take after its case ended (beyond the case's timeout): 30 s plus the budget at
    COPY_OUT_FLOOR, or REPROKIT_COPY_OUT_SECONDS. The keeper stops itself there (the record says "copy-out cut off");
    the runner kills it only COPY_OUT_GRACE later."""
    default = 30 + config["cache_budget"] * len(config["budgeted"]) / COPY_OUT_FLOOR
    return float(budget("REPROKIT_COPY_OUT_SECONDS", -1)) if budget("REPROKIT_COPY_OUT_SECONDS", -1) >= 0 else default


def case_ended_at(private: Path) -> float | None:
    """The keeper's monotonic time at which the case ended and copy-out began (None: no copy-out began)."""
    try:
        return float(read_untrusted(private / "case-ended", 64)[0])
    except (UntrustedFile, ValueError):
        return None


def read_copy_out(private: Path) -> CopyOut | None:
    """What the keeper says it copied out (written outside what the case can write), or None: nothing to copy."""
    try:
        said = json.loads(read_untrusted(private / "copy-out.json", 1 << 20)[0])
        if "failed" in said:
            return CopyOut(0, 0, 0.0, (), failed=str(said["failed"])[:300])
        return CopyOut(
            int(said["files"]),
            int(said["bytes"]),
            float(said["seconds"]),
            tuple((str(p), str(w)) for p, w in said["not_copied"]),
            int(said["more_not_copied"]),
        )
    except (UntrustedFile, ValueError, KeyError, TypeError):
        return None


def read_held(private: Path) -> KeeperReport | None:
    """What contain.py reports of the run (written by the keeper, outside what the case can write), its held facts
    kept to those a keeper writes (a case without Landlock could have replaced the file: they end up in reports), a
    failure or budget only as the keeper names them; None where it reported nothing readable."""
    try:
        said = json.loads(read_untrusted(private / "held.json", 8192)[0])
    except (UntrustedFile, ValueError):
        return None
    if not isinstance(said, dict) or not isinstance(said.get("held"), list):
        return None
    over = said.get("over_budget")
    over = over if isinstance(over, str) and re.fullmatch(r"(memory|disk|cache|pids) (\d+|\?)( MiB)?", over) else None
    failure = said.get("failure") if said.get("failure") in FAILURES else None
    return {"held": [h for h in said["held"] if contained_facts([h])], "failure": failure, "over_budget": over}


# /dev's device nodes a CPU run writes, and its size-limited /dev/shm: no file the case makes lands in /dev's tmpfs,
# which has no size of its own. Accelerator runs open their device nodes for writing: all of /dev.
DEV_WRITABLE = ("/dev/shm", "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")


def child_env(
    base: dict[str, str],
    workdir: Path,
    threads: int,
    extra: dict[str, str],
    writable: tuple[Path, ...] = (),
    token: str = "",
) -> dict[str, str]:
    """The run's environment; `writable` adds folders the run may write besides its own (e.g. a TORCH_TRACE folder)."""
    env = {k: v for k, v in base.items() if k in ALLOWED_ENV}
    home, tmp = workdir / "home", workdir / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    headers = tmp / f"torchinductor_{_user_name()}" / "precompiled_headers"  # torch's default_cache_dir()
    # Shared only where runs share one PID namespace: torch names its temporary files by pid and thread, and the case
    # of every contained run (root: a PID namespace each) is pid 2, so two runs at once collided in a shared folder.
    if case_user() is None and not headers.exists():
        headers.parent.mkdir(exist_ok=True)
        headers.symlink_to(shared_header_dir(), target_is_directory=True)
    env.update(FIXED_ENV)
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "TEMP": str(tmp),
            "TORCHINDUCTOR_CACHE_DIR": str(workdir / "inductor"),
            "TRITON_CACHE_DIR": str(workdir / "triton"),
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no compile-worker pool per run: jobs already fill the cores
            "REPROKIT_FILE_CAP": str(FILE_CAP),
            # Writable for the case: its own folder, the shared headers, devices (/dev/null, /dev/shm); on accelerators
            # also /proc, without which the CUDA driver fails to start (error 304, measured on an H200). See probe.py.
            # The shared header folder only where runs use it (not as root: each run's headers stay in its own folder).
            "REPROKIT_WRITABLE": os.pathsep.join(
                [
                    str(workdir),
                    *([str(shared_header_dir())] if case_user() is None else []),
                    *DEV_WRITABLE,
                    *(["/dev", "/proc"] if extra.get("REPRO_DEVICE", "cpu") != "cpu" else []),
                    *map(str, writable),
                ]
            ),
        }
    )
    if token:  # finds every process of the run, even one that left its process group, after the runner died
        env["REPROKIT_RUN_TOKEN"] = token
    env.update(extra)
    return env
