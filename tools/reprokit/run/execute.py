"""Run one script in a fresh child process, isolated, under a timeout, and observe it.

Isolation: a new process session (so the whole group, torchrun ranks included, is killed together), a private
temporary working directory holding HOME, TMPDIR and the inductor/triton caches, and an environment built from an
allow-list, so secrets in the runner's environment never reach case code.
"""

from __future__ import annotations

import atexit
import hmac
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.child import CONTAIN, PROBE

TAIL_BYTES = 6000
FILE_CAP = 2 << 30  # the largest file a run may write (its output goes through pipes, counted, not stored)

# Variables passed through from the runner's environment, by exact name; everything else is dropped (a prefix such as
# TORCH_ or NCCL_ let any variable through: TORCH_LOGS, a runner's NCCL_* credentials-bearing settings, REPRO_ set by
# a caller). What a run needs beyond these (REPRO_DEVICE, REPRO_DTYPE, a sweep cell's parameters, cache folders) the
# runner sets itself from the plan.
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
               "CUDA_HOME", "ROCM_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH",
               # which devices the run may use (set by the scheduler or the container runtime)
               "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "HIP_VISIBLE_DEVICES",
               "ROCR_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES",
               # how a host's collectives reach each other (its interfaces; InfiniBand or P2P switched off)
               "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "GLOO_SOCKET_IFNAME")
# Always on: NVLink multicast off (a program using it can take a shared host's GPUs down); unbuffered output;
# PYTHONSAFEPATH (python -P): no module of the case's folder (or probe.py's) is importable before the probe has
# confined writes (probe.py then drops it and puts the script's folder first on sys.path, as `python repro.py` does).
FIXED_ENV = {"PYTHONSAFEPATH": "1", "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
             "NVSHMEM_DISABLE_NVLS": "1", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


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
    contained: str | None = None  # what kept the run's processes in (contain.py), e.g. "subreaper, pid namespace"
    malformed: str | None = None  # why the probes' reports were not trusted (then status is crash)

    def record_fields(self) -> dict:
        """The fields a Record keeps of this observation (records.Record names them the same)."""
        return {"status": self.status, "exit_code": self.exit_code, "signal": self.signal,
                "exception": self.exception, "message": self.message, "stage": self.stage, "dynamo": self.dynamo,
                "seconds": self.seconds, "stderr_tail": self.stderr_tail, "stdout_tail": self.stdout_tail[-2000:],
                "output_bytes": {"stdout": self.stdout_bytes, "stderr": self.stderr_bytes},
                "confined": _confined(self.probes), "contained": self.contained}


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


def case_user() -> tuple[int, int] | None:
    """The uid and gid a root runner runs cases as (nobody: a case needs no root); None when not root."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def _user_name() -> str:
    """The name torch's getpass.getuser() finds in the child (which gets no USER/LOGNAME): the passwd entry's."""
    uid = (case_user() or (os.getuid(),))[0]
    try:
        return re.sub(r'[\\/:*?"<>|]', "_", pwd.getpwuid(uid).pw_name)
    except KeyError:
        return f"uid_{uid}"


def contain_config(python: str, script: Path, workdir: Path, private: Path, env: dict[str, str],
                   writable: tuple[Path, ...] = ()) -> dict:
    """What contain.py needs for one run; as root, the run's folders are handed to the case user first.

    `needs`: the paths the case must reach as that user (the interpreter's prefix and search path, probe.py, the
    case's folder, the run's folders); in the run's mount namespace a folder above one that the user cannot enter is
    replaced by one holding only the way to these (contain.py)."""
    user = case_user()
    reports = private / "reports"
    reports.mkdir()
    config = {"held": str(private / "held.json")}
    if user is None:
        return config
    uid, gid = user
    for folder in (workdir, reports, shared_header_dir(), *writable):
        for path in [folder, *(folder.rglob("*") if folder == workdir else ())]:
            os.lchown(path, uid, gid)
    needs = {str(Path(python).absolute().parent.parent), str(Path(python).resolve().parent.parent), str(PROBE),
             str(script.parent.absolute()), str(workdir), str(reports), str(shared_header_dir()),
             *map(str, writable)}
    if Path(python).absolute() == Path(sys.executable).absolute():  # the interpreter's search path: site-packages
        needs.update(p for p in (sys.prefix, sys.base_prefix, *sys.path) if p and os.path.isabs(p))
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "ROCM_PATH", "LD_LIBRARY_PATH", "PATH", "PYTHONPATH"):
        needs.update(p for p in env.get(name, "").split(os.pathsep) if os.path.isabs(p))
    config.update(uid=uid, gid=gid, needs=sorted(p for p in needs if os.path.exists(p)))
    return config


def read_held(private: Path) -> str | None:
    """What contain.py says held for the run (written by the keeper, outside what the case can write)."""
    try:
        held = json.loads(read_untrusted(private / "held.json", 4096)[0])
    except (UntrustedFile, ValueError):
        return None
    if not isinstance(held, list):
        return None
    # only what contain.py writes (a case without Landlock could have replaced the file): it ends up in reports
    return ", ".join(h for h in held if isinstance(h, str) and re.fullmatch(_HELD, h)) or None


_HELD = r"subreaper|pid namespace|private /dev/shm|uid \d{1,10}"


def child_env(base: dict[str, str], workdir: Path, threads: int, extra: dict[str, str],
              writable: tuple[Path, ...] = (), token: str = "") -> dict[str, str]:
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
    env.update({
        "HOME": str(home), "TMPDIR": str(tmp), "TEMP": str(tmp),
        "TORCHINDUCTOR_CACHE_DIR": str(workdir / "inductor"), "TRITON_CACHE_DIR": str(workdir / "triton"),
        "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no compile-worker pool per run: jobs already fill the cores
        "REPROKIT_FILE_CAP": str(FILE_CAP),
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


def tail_text(data: bytes, size: int) -> str:
    text = data[-TAIL_BYTES:].decode("utf-8", "replace")
    if size > TAIL_BYTES:
        text = f"[... {size - TAIL_BYTES} earlier bytes truncated ...]\n" + text.split("\n", 1)[-1]
    return text


class UntrustedFile(Exception):
    """A file of the run's folders is not what the runner wrote there: a link, a FIFO, a device."""


def read_untrusted(path: Path, cap: int, tail: bool = False) -> tuple[bytes, int]:
    """At most `cap` bytes (the last ones with tail=True) of a regular file the case may have replaced, and its size.

    O_NOFOLLOW: no symlink to elsewhere; O_NONBLOCK + S_ISREG: a FIFO or a device is refused, never read (a FIFO
    blocks the reader until someone opens its other end)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise UntrustedFile(f"{path.name}: cannot be opened ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFile(f"{path.name}: not a regular file")
        if tail and info.st_size > cap:
            os.lseek(fd, info.st_size - cap, os.SEEK_SET)
        chunks, left = [], cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


class Capture:
    """A child's stdout or stderr through a pipe: the byte count and the tail, kept in memory (never on disk)."""

    def __init__(self):
        import threading

        self.read_fd, self.write_fd = os.pipe()
        self.size, self._tail, self._done = 0, b"", threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        import select

        while True:
            ready, _, _ = select.select([self.read_fd], [], [], 0.2)
            if not ready:
                if self._done.is_set():  # a process that escaped the kill still holds the pipe: stop reading
                    return
                continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                return
            self.size += len(chunk)
            self._tail = (self._tail + chunk)[-2 * TAIL_BYTES:]

    def close_writer(self) -> None:
        os.close(self.write_fd)

    def finish(self) -> tuple[str, int]:
        self._done.set()
        self._thread.join()
        os.close(self.read_fd)
        return tail_text(self._tail, self.size), self.size


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
            writable: tuple[Path, ...] = (), stopper: Stopper | None = None) -> Observation:
    """Run `script` once in a fresh process and return what happened. Never raises for the script's faults; raises
    Interrupted when the stopper killed it."""
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-"))
    private = Path(tempfile.mkdtemp(prefix="reprokit-report-"))  # outside what the case may write (Landlock)
    stopper = stopper or Stopper()
    key = secrets.token_hex(16)
    try:
        full_env = child_env(env, workdir, threads, extra_env, writable, stopper.token)
        config = contain_config(python, script, workdir, private, full_env, writable)
        full_env.update(REPROKIT_REPORT_DIR=str(private / "reports"), REPROKIT_REPORT_KEY=key)
        out, err = Capture(), Capture()
        start = time.monotonic()
        try:
            command = [python, str(CONTAIN), json.dumps(config), "--", *command_for(script, launcher, world_size, python)]
            proc = subprocess.Popen(command, cwd=workdir,
                                    env=full_env, stdin=subprocess.DEVNULL, stdout=out.write_fd, stderr=err.write_fd,
                                    start_new_session=True)
        finally:
            out.close_writer()
            err.close_writer()
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
        outputs = (*out.finish(), *err.finish())
        if proc.pid in stopper.killed:
            raise Interrupted(str(script))
        seconds = time.monotonic() - start
        return finish_observation(private, key, proc.returncode, timed_out, seconds, world_size, outputs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)


REPORT_CAP = 256 * 1024  # a probe report is a few KB (the message is cut at 2000 characters)
_REPORT_FIELDS = {"exception": (str, type(None)), "message": (str, type(None)), "stage": (str, type(None)),
                  "exit_code": (int,), "confined": (int, type(None)), "chain": (list,), "dynamo": (dict, type(None))}


def read_reports(private: Path, key: str) -> tuple[list[dict], str | None]:
    """The probes' reports (one per process: each torchrun rank) and, if one is not what a probe writes, why.

    Only a report carrying this run's key counts: the case cannot write the folder (it is outside its Landlock
    rules), and without Landlock it would have to find the key."""
    reports = []
    for path in sorted(private.glob("probe-*.json")):
        try:
            text = read_untrusted(path, REPORT_CAP)[0]
            if not text:  # opened, never written: the process died or was killed before the script ended
                continue
            data = json.loads(text)
        except UntrustedFile as err:
            return [], str(err)
        except ValueError:
            return [], f"{path.name}: not JSON"
        if not isinstance(data, dict) or not hmac.compare_digest(str(data.pop("key", "")), key):
            return [], f"{path.name}: not written by this run's probe (no key)"
        for name, value in data.items():
            if name not in _REPORT_FIELDS or not isinstance(value, _REPORT_FIELDS[name]) or isinstance(value, bool):
                return [], f"{path.name}: field {name!r} is not what the probe writes"
        reports.append(data)
    return reports, None


def finish_observation(private: Path, key: str, code: int | None, timed_out: bool, seconds: float, world_size: int,
                       outputs: tuple[str, int, str, int]) -> Observation:
    probes, malformed = read_reports(private / "reports", key)
    obs = _classify(code, timed_out, seconds, probes, world_size, *outputs)
    obs.contained = read_held(private)
    if malformed:  # an observation the case tampered with (or a probe that broke): recorded as such, never trusted
        obs.status, obs.malformed = "crash", malformed
        obs.exception, obs.stage, obs.dynamo = None, None, None
        obs.message = f"malformed observation: {malformed}"[:300]
    return obs


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _classify(code, timed_out, seconds, probes, world_size, stdout_tail, stdout_bytes, stderr_tail,
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
