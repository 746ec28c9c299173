"""Run one script in a fresh child process, isolated, under a timeout, and observe it.

Isolation: a new process session (so the whole group, torchrun ranks included, is killed together), a private
temporary working directory holding HOME, TMPDIR and the inductor/triton caches, and an environment built from an
allow-list, so secrets in the runner's environment never reach case code.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.child import CONTAIN, PROBE, budgets
from reprokit.child.folder_tree import remove_tree
from reprokit.model.records import RunStatus, Stage
from reprokit.model.untrusted_text import contained_facts
from reprokit.run.child_setup import (
    COPY_OUT_GRACE,
    CopyOut,
    case_ended_at,
    child_env,
    contain_config,
    read_copy_out,
    read_held,
)
from reprokit.run.host_folders import open_folder
from reprokit.run.process_groups import Interrupted, Stopper, kill_group
from reprokit.run.sandbox import sandbox_config
from reprokit.run.untrusted_files import TAIL_BYTES, read_reports, tail_text


@dataclass
class Observation:
    """What one child process did: how it ended (`status`) and what its probes reported."""

    status: RunStatus
    exit_code: int | None
    signal: str | None
    seconds: float
    exception: str | None = None
    message: str | None = None
    stage: str | None = None  # a Stage where the probe named one (Stage.read), the ladder's otherwise
    dynamo: dict | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    probes: list[dict] = field(default_factory=list)
    contained: str | None = None  # what kept the run's processes in (contain.py), e.g. "subreaper, pid namespace"
    malformed: str | None = None  # why the probes' reports were not trusted (then status is crash)
    over_budget: str | None = None  # "memory 8192 MiB" / "disk 4096 MiB": the run reached it (then status says so)
    copy_out: CopyOut | None = None  # what came out of the budgeted host folders, timed apart from `seconds`

    def record_fields(self) -> dict:
        """The fields a Record keeps of this observation (records.Record names them the same)."""
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "exception": self.exception,
            "message": self.message,
            "stage": self.stage,
            "dynamo": self.dynamo,
            "seconds": self.seconds,
            "stderr_tail": self.stderr_tail,
            "stdout_tail": self.stdout_tail[-2000:],
            "output_bytes": {"stdout": self.stdout_bytes, "stderr": self.stderr_bytes, **_copied(self.copy_out)},
            "confined": _confined(self.contained),
            "contained": self.contained,
        }


def _copied(copy: CopyOut | None) -> dict[str, int]:
    """Copy-out's counts as the record keeps them (bytes and files out of the host folders, files not copied)."""
    if copy is None:
        return {}
    return {
        "copied_out": copy.bytes,
        "copied_out_files": copy.files,
        "not_copied_files": copy.not_copied_count,
        "copy_out_ms": round(copy.seconds * 1000),
    }


def _confined(contained: str | None) -> int | None:
    """The Landlock ABI the keeper confined the run with (every process of it, torchrun ranks included), as the keeper
    says, never as a probe says: a probe's report is written by the case's own process."""
    found = re.search(r"landlock ABI (\d+)", contained or "")
    return int(found.group(1)) if found else None


class Capture:
    """A child's stdout or stderr through a pipe: the byte count and the tail, kept in memory (never on disk)."""

    def __init__(self, tail_bytes: int = TAIL_BYTES):
        import threading

        self.tail_bytes = tail_bytes
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
            self._tail = (self._tail + chunk)[-2 * self.tail_bytes :]

    def close_writer(self) -> None:
        os.close(self.write_fd)

    def finish(self) -> tuple[str, int]:
        self._done.set()
        self._thread.join()
        os.close(self.read_fd)
        return tail_text(self._tail, self.size, self.tail_bytes), self.size


def command_for(script: Path, launcher: str, world_size: int, python: str) -> list[str]:
    if launcher == "torchrun":  # the probe runs torch.distributed.run --standalone, each rank a probe of the script
        return [python, str(PROBE), "--torchrun", str(world_size), str(script)]
    return [python, str(PROBE), str(script)]


def _key_pipe(key: str) -> int:
    """The read end of a pipe holding the run's key (the keeper reads it, then hands it on the same way)."""
    read_end, write_end = os.pipe()
    os.write(write_end, key.encode())
    os.close(write_end)
    return read_end


def observe(
    script: Path,
    *,
    env: dict[str, str],
    extra_env: dict[str, str],
    timeout: float,
    launcher: str = "python",
    world_size: int = 1,
    python: str = sys.executable,
    threads: int = 1,
    writable: tuple[Path, ...] = (),
    stopper: Stopper | None = None,
    tail_bytes: int = TAIL_BYTES,
) -> Observation:
    """Run `script` once in a fresh process and return what happened. Never raises for the script's faults; raises
    Interrupted when the stopper killed it. `tail_bytes`: how much of each output stream is kept (a bug report
    quotes more of it than a record keeps)."""
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-"))
    private = Path(tempfile.mkdtemp(prefix="reprokit-report-"))  # outside what the case may write (Landlock)
    stopper = stopper or Stopper()
    key = secrets.token_hex(16)
    host_fds: list[int] = []
    try:
        full_env = child_env(env, workdir, threads, extra_env, writable, stopper.token)
        config = contain_config(python, script, workdir, private, full_env, writable, ranks=world_size)
        full_env.update(REPROKIT_REPORT_DIR=str(private / "reports"))
        for folder in writable:  # bound and written by the keeper through these: a link swapped in is not followed
            host_fds.append(open_folder(folder))
        key_fd = _key_pipe(key)  # the key on a descriptor: never in an environment a case process could read
        config["key_fd"], config["parent"], config["budgeted_fds"] = key_fd, os.getpid(), host_fds
        config["bwrap"], config["container"] = sandbox_config()
        out, err = Capture(tail_bytes), Capture(tail_bytes)
        start = time.monotonic()
        try:
            command = [
                python,
                str(CONTAIN),
                json.dumps(config),
                "--",
                *command_for(script, launcher, world_size, python),
            ]
            proc = subprocess.Popen(
                command,
                cwd=workdir,
                pass_fds=(key_fd, *host_fds),
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=out.write_fd,
                stderr=err.write_fd,
                start_new_session=True,
            )
        finally:
            os.close(key_fd)
            out.close_writer()
            err.close_writer()
        stopper.started(proc.pid)
        timed_out = False
        try:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                if case_ended_at(private) is None:  # the case itself is past its limit
                    raise
                proc.wait(timeout=config["copy_out_seconds"] + COPY_OUT_GRACE)  # copy-out, on its own clock
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc.pid)
            proc.wait()
        finally:
            kill_group(proc.pid)  # children that outlived the script (compile workers, stray forks)
            budgets.remove_left(proc.pid)  # a keeper killed at the timeout left its cgroups
            stopper.ended(proc.pid)
        outputs = (*out.finish(), *err.finish())
        if proc.pid in stopper.killed:
            raise Interrupted(str(script))
        ended = case_ended_at(private)  # the case's time stops where copy-out began
        seconds = (ended if ended is not None and start <= ended else time.monotonic()) - start
        return finish_observation(private, key, proc.returncode, timed_out, seconds, world_size, outputs)
    finally:
        for fd in host_fds:
            os.close(fd)
        remove_run_folders(workdir, private)


def remove_run_folders(*folders: Path) -> None:
    """A run's own folders, whatever tree a case made there (no recursion: child/folder_tree.py)."""
    for folder in folders:
        try:
            remove_tree(str(folder))
        except OSError:
            pass


def finish_observation(
    private: Path,
    key: str,
    code: int | None,
    timed_out: bool,
    seconds: float,
    world_size: int,
    outputs: tuple[str, int, str, int],
) -> Observation:
    probes, malformed = read_reports(private / "reports", key)
    obs = _classify(code, timed_out, seconds, probes, world_size, *outputs)
    said = read_held(private)  # the keeper's report: decided by its fields, never by searching its words
    obs.contained = contained_facts(said["held"]) if said else None
    obs.copy_out = read_copy_out(private)
    if said and said["over_budget"]:  # not torch's behaviour: decides status
        obs.status, obs.over_budget = RunStatus.OVER_BUDGET, said["over_budget"]
    failure = said["failure"] if said else None
    if failure == "stopped":  # the case stopped the sandbox's first process: ended
        obs.status, obs.signal, obs.exit_code = RunStatus.CRASH, "SIGSTOP", None
    if failure in NOT_STARTED:  # the sandbox never started the case: nothing was observed
        malformed = NOT_STARTED[failure]
    if malformed:  # an observation the case tampered with (or a probe that broke): recorded as such, never trusted
        obs.status, obs.malformed = RunStatus.CRASH, malformed
        obs.exception, obs.stage, obs.dynamo = None, None, None
        obs.message = f"malformed observation: {malformed}"[:300]
    return obs


# The keeper's failures (child/keeper.FAILURES) where the case never ran, as the record's message says them.
NOT_STARTED = {
    "bubblewrap": "the run's bubblewrap sandbox did not start",
    "no-sandbox": "a warm run as root has no sandbox (bubblewrap holds cold runs only): not started",
}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _classify(
    code, timed_out, seconds, probes, world_size, stdout_tail, stdout_bytes, stderr_tail, stderr_bytes
) -> Observation:
    failed = next((p for p in probes if p.get("exception") or p.get("exit_code")), None)
    first = failed or (probes[0] if probes else {})
    rank_signal = re.search(r"exitcode\s*:\s*-(\d+)", stderr_tail)  # torchrun's summary of a rank that died
    sig = None
    if timed_out:
        status = RunStatus.TIMEOUT
    elif code is not None and code < 0:
        # Any signal, SIGKILL included, is a crash: a case can send it to itself, so a SIGKILL is no proof of an
        # out-of-memory kill (the run's memory budget, where it holds, says "over-budget" from the cgroup's count).
        sig, status = _signal_name(-code), RunStatus.CRASH
    elif code and rank_signal and len(probes) < world_size and not failed:  # not torchrun stopping the others
        sig, status = _signal_name(int(rank_signal.group(1))), RunStatus.CRASH
    elif first.get("exception") == "MemoryError" or "OutOfMemoryError" in (first.get("exception") or ""):
        status = RunStatus.OOM
    elif code == 0:
        status = RunStatus.PASS
    else:
        status = RunStatus.FAIL
    return Observation(
        status=status,
        exit_code=code,
        signal=sig,
        seconds=round(seconds, 2),
        exception=first.get("exception"),
        message=first.get("message"),
        stage=Stage.read(first.get("stage")),
        dynamo=first.get("dynamo"),
        stdout_tail=stdout_tail,
        stderr_tail=stderr_tail,
        stdout_bytes=stdout_bytes,
        stderr_bytes=stderr_bytes,
        probes=probes,
    )
