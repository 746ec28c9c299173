"""Run one script in a fresh child process, isolated, under a timeout, and observe it.

Isolation: a new process session (so the whole group, torchrun ranks included, is killed together), a private
temporary working directory holding HOME, TMPDIR and the inductor/triton caches, and an environment built from an
allow-list, so secrets in the runner's environment never reach case code.
"""

from __future__ import annotations

import atexit
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROBE = Path(__file__).with_name("probe.py")
TAIL_BYTES = 6000

# Variables passed through from the runner's environment; everything else is dropped.
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
               "CUDA_HOME", "ROCM_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH")
ALLOWED_PREFIXES = ("CUDA_VISIBLE", "NVIDIA_", "HIP_VISIBLE", "ROCR_VISIBLE", "ASCEND_RT_", "NCCL_", "GLOO_",
                    "REPRO_", "TORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_", "TRITON_")
# Always on: NVLink multicast off (a program using it can take a shared host's GPUs down); unbuffered output.
FIXED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
             "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@dataclass
class Observation:
    """What one child process did. `status` is pass | fail | crash | timeout | oom."""

    status: str
    exit_code: int | None
    signal: str | None
    seconds: float
    exception: str | None = None
    message: str | None = None
    stage: str | None = None
    dynamo: dict | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    probes: list[dict] = field(default_factory=list)

    def record_fields(self) -> dict:
        """The fields a Record keeps of this observation (records.Record names them the same)."""
        return {"status": self.status, "exit_code": self.exit_code, "signal": self.signal,
                "exception": self.exception, "message": self.message, "stage": self.stage, "dynamo": self.dynamo,
                "seconds": self.seconds, "stderr_tail": self.stderr_tail, "stdout_tail": self.stdout_tail[-2000:],
                "output_bytes": {"stdout": self.stdout_bytes, "stderr": self.stderr_bytes},
                "confined": _confined(self.probes)}


def _confined(probes: list[dict]) -> int | None:
    """The Landlock ABI every process of the run (each torchrun rank) was confined with; None if one was not."""
    abis = [p.get("confined") for p in probes]
    return min(abis) if abis and all(isinstance(a, int) for a in abis) else None


class Interrupted(Exception):
    """The run was killed because the runner was asked to stop (SIGINT/SIGTERM): it has no observation."""


class Stopper:
    """The runner's stop switch: once pulled, no run starts and every live run's process group is killed."""

    def __init__(self, token: str = ""):
        import threading

        self.token = token  # every process of this runner's runs carries REPROKIT_RUN_TOKEN=<token>
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._live: set[int] = set()
        self.killed: set[int] = set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def started(self, pgid: int) -> None:
        with self._lock:
            self._live.add(pgid)
        if self.stopped:  # it raced with stop(): end it too
            self.stop()

    def ended(self, pgid: int) -> None:
        with self._lock:
            self._live.discard(pgid)

    def stop(self) -> None:
        self._event.set()
        with self._lock:
            live = list(self._live)
            self.killed.update(live)
        for pgid in live:
            kill_group(pgid)


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


def _user_name() -> str:
    """The name torch's getpass.getuser() finds in the child (which gets no USER/LOGNAME): the passwd entry's."""
    try:
        return re.sub(r'[\\/:*?"<>|]', "_", pwd.getpwuid(os.getuid()).pw_name)
    except KeyError:
        return f"uid_{os.getuid()}"


def child_env(base: dict[str, str], workdir: Path, threads: int, extra: dict[str, str],
              writable: tuple[Path, ...] = (), token: str = "") -> dict[str, str]:
    """The run's environment; `writable` adds folders the run may write besides its own (e.g. a TORCH_TRACE folder)."""
    env = {k: v for k, v in base.items() if k in ALLOWED_ENV or k.startswith(ALLOWED_PREFIXES)}
    home, tmp = workdir / "home", workdir / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    headers = tmp / f"torchinductor_{_user_name()}" / "precompiled_headers"  # torch's default_cache_dir()
    if not headers.exists():
        headers.parent.mkdir(exist_ok=True)
        headers.symlink_to(shared_header_dir(), target_is_directory=True)
    env.update(FIXED_ENV)
    env.update({
        "HOME": str(home), "TMPDIR": str(tmp), "TEMP": str(tmp),
        "TORCHINDUCTOR_CACHE_DIR": str(workdir / "inductor"), "TRITON_CACHE_DIR": str(workdir / "triton"),
        "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no compile-worker pool per run: jobs already fill the cores
        "REPROKIT_PROBE_DIR": str(workdir),
        # Writable for the case: its own folder, the shared headers, devices (/dev/null, /dev/shm); on accelerators
        # also /proc, without which the CUDA driver fails to start (error 304, measured on an H200). See probe.py.
        "REPROKIT_WRITABLE": os.pathsep.join([str(workdir), str(shared_header_dir()), "/dev",
                                              *(["/proc"] if extra.get("REPRO_DEVICE", "cpu") != "cpu" else []),
                                              *map(str, writable)]),
    })
    if token:  # finds every process of the run, even one that left its process group, after the runner died
        env["REPROKIT_RUN_TOKEN"] = token
    env.update(extra)
    return env


def _tail(path: Path) -> tuple[str, int]:
    size = path.stat().st_size if path.exists() else 0
    with open(path, "rb") as fh:
        if size > TAIL_BYTES:
            fh.seek(size - TAIL_BYTES)
        text = fh.read().decode("utf-8", "replace")
    if size > TAIL_BYTES:
        text = f"[... {size - TAIL_BYTES} earlier bytes truncated ...]\n" + text.split("\n", 1)[-1]
    return text, size


def _descendants(root: int) -> list[int]:
    """Every live descendant of root (Linux /proc): torchrun starts its ranks in sessions of their own."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parent_of[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, ppid in parent_of.items() if ppid in frontier]
        found += children
        frontier = children
    return found


def kill_group(pgid: int) -> None:
    """Kill the run's process group and every descendant, including those that left the group (setsid)."""
    for pid in [pgid, *(_descendants(pgid) if os.path.isdir("/proc") else [])]:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def command_for(script: Path, launcher: str, world_size: int, python: str) -> list[str]:
    if launcher == "torchrun":
        return [python, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world_size}",
                str(PROBE), str(script)]
    return [python, str(PROBE), str(script)]


def observe(script: Path, *, env: dict[str, str], extra_env: dict[str, str], timeout: float, launcher: str = "python",
            world_size: int = 1, python: str = sys.executable, threads: int = 1,
            keep_dir: Path | None = None, writable: tuple[Path, ...] = (),
            stopper: Stopper | None = None) -> Observation:
    """Run `script` once in a fresh process and return what happened. Never raises for the script's faults; raises
    Interrupted when the stopper killed it."""
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-"))
    stopper = stopper or Stopper()
    try:
        full_env = child_env(env, workdir, threads, extra_env, writable, stopper.token)
        out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
        start = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(command_for(script, launcher, world_size, python), cwd=workdir,
                                    env=full_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
            stopper.started(proc.pid)
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc.pid)
                proc.wait()
            finally:
                kill_group(proc.pid)  # children that outlived the script (compile workers, stray forks)
                stopper.ended(proc.pid)
        if proc.pid in stopper.killed:
            raise Interrupted(str(script))
        seconds = time.monotonic() - start
        return finish_observation(workdir, proc.returncode, timed_out, seconds, world_size, keep_dir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def finish_observation(workdir: Path, code: int | None, timed_out: bool, seconds: float, world_size: int,
            keep_dir: Path | None) -> Observation:
    probes = [json.loads(p.read_text()) for p in sorted(workdir.glob("probe-*.json"))]
    stdout_tail, stdout_bytes = _tail(workdir / "stdout.txt")
    stderr_tail, stderr_bytes = _tail(workdir / "stderr.txt")
    if keep_dir is not None:
        keep_dir.mkdir(parents=True, exist_ok=True)
        for name in ("stdout.txt", "stderr.txt"):
            shutil.copy(workdir / name, keep_dir / name)
    return _classify(code, timed_out, seconds, probes, world_size, stdout_tail, stderr_tail, stdout_bytes,
                     stderr_bytes)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _classify(code, timed_out, seconds, probes, world_size, stdout_tail, stderr_tail, stdout_bytes,
              stderr_bytes) -> Observation:
    failed = next((p for p in probes if p.get("exception") or p.get("exit_code")), None)
    first = failed or (probes[0] if probes else {})
    rank_signal = re.search(r"exitcode\s*:\s*-(\d+)", stderr_tail)  # torchrun's summary of a rank that died
    sig = None
    if timed_out:
        status = "timeout"
    elif code is not None and code < 0:
        sig = _signal_name(-code)
        status = "oom" if sig == "SIGKILL" else "crash"  # an unasked-for SIGKILL is the kernel's OOM killer
    elif code and rank_signal and len(probes) < world_size and not failed:  # not torchrun stopping the others
        sig = _signal_name(int(rank_signal.group(1)))
        status = "oom" if sig == "SIGKILL" else "crash"
    elif first.get("exception") == "MemoryError" or "OutOfMemoryError" in (first.get("exception") or ""):
        status = "oom"
    elif code == 0:
        status = "pass"
    else:
        status = "fail"
    return Observation(status=status, exit_code=code, signal=sig, seconds=round(seconds, 2),
                       exception=first.get("exception"), message=first.get("message"), stage=first.get("stage"),
                       dynamo=first.get("dynamo"), stdout_tail=stdout_tail, stderr_tail=stderr_tail,
                       stdout_bytes=stdout_bytes, stderr_bytes=stderr_bytes, probes=probes)
