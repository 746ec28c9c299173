"""The runner's side of warm-interpreter mode: one zygote process (torch imported once) forks a child per run.

Same isolation as a cold run (own process group, private working directory, allow-listed environment, timeout
killing the group); only the interpreter start and `import torch` are shared, and interpreter teardown is skipped (a
forked child of a threaded process cannot run it safely), so a crash at exit shows only in cold runs. torchrun cases
always run cold.
Published runs stay cold (the default); the run record says which mode made it.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from reprokit.child import ZYGOTE
from reprokit.model.schema import EnvironmentProblem
from reprokit.run.child_setup import child_env, contain_config
from reprokit.run.execute import Observation, finish_observation, remove_run_folders
from reprokit.run.process_groups import Interrupted, Stopper, kill_group
from reprokit.run.untrusted_files import TAIL_BYTES, UntrustedFile, read_untrusted, tail_text


def _output(path: Path) -> tuple[str, int]:
    """The tail and size of an output file the zygote's child wrote (read as untrusted: never a FIFO or a link)."""
    try:
        data, size = read_untrusted(path, TAIL_BYTES, tail=True)
    except UntrustedFile as err:
        return f"[output not read: {err}]", 0
    return tail_text(data, size), size


class WarmPool:
    def __init__(self, python: str = sys.executable, token: str = ""):
        # The children's environment (allow-list, fixed settings), so that what torch reads from it at import time
        # is the same; the zygote's own folders are private, and the runs' writes cannot reach them (Landlock).
        self._python = python
        self._dir = Path(tempfile.mkdtemp(prefix="reprokit-zygote-"))
        self._proc = subprocess.Popen(
            [python, str(ZYGOTE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
            cwd=self._dir,
            env=child_env(dict(os.environ), self._dir, 1, {}, token=token),
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None  # both are pipes (PIPE above)
        self._to_zygote, self._from_zygote = self._proc.stdin, self._proc.stdout
        ready = self._from_zygote.readline()
        if not ready.strip().startswith('{"ready"'):
            raise EnvironmentProblem(f"{python}: the warm interpreter did not start (cannot import torch?)")
        self._replies: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self._from_zygote:
            message = json.loads(line)
            with self._lock:
                box = self._replies.get(message.get("id"))
            if box is not None:
                box.put(message)

    def observe(
        self,
        script: Path,
        *,
        env: dict[str, str],
        extra_env: dict[str, str],
        timeout: float,
        threads: int = 1,
        writable: tuple[Path, ...] = (),
        stopper: Stopper | None = None,
    ) -> Observation:
        stopper = stopper or Stopper()
        workdir = Path(tempfile.mkdtemp(prefix="reprokit-warm-"))
        private = Path(tempfile.mkdtemp(prefix="reprokit-report-"))  # outside what the case may write (Landlock)
        key = secrets.token_hex(16)
        ident = next(self._ids)
        box: queue.Queue[dict] = queue.Queue()
        with self._lock:
            self._replies[ident] = box
        try:
            run_env = child_env(env, workdir, threads, extra_env, writable, stopper.token)
            config = contain_config(self._python, script, workdir, private, run_env, writable)
            config["parent"] = self._proc.pid  # the keeper is the zygote's child: it dies with the zygote
            # The key in os.environ of the fork only: the zygote's own environment never held it.
            run_env.update(REPROKIT_REPORT_DIR=str(private / "reports"), REPROKIT_REPORT_KEY=key)
            request = {
                "id": ident,
                "script": str(script),
                "cwd": str(workdir),
                "env": run_env,
                "contain": config,
                "stdout": str(private / "stdout.txt"),
                "stderr": str(private / "stderr.txt"),
            }
            start = time.monotonic()
            with self._lock:
                self._to_zygote.write(json.dumps(request) + "\n")
                self._to_zygote.flush()
            pid = box.get(timeout=60)["pid"]
            stopper.started(pid)
            timed_out = False
            try:
                status = box.get(timeout=timeout)["status"]
            except queue.Empty:
                timed_out = True
                kill_group(pid)
                status = box.get()["status"]
            kill_group(pid)
            stopper.ended(pid)
            if pid in stopper.killed:
                raise Interrupted(str(script))
            outputs = (*_output(private / "stdout.txt"), *_output(private / "stderr.txt"))
            return finish_observation(private, key, status, timed_out, time.monotonic() - start, 1, outputs)
        finally:
            with self._lock:
                self._replies.pop(ident, None)
            remove_run_folders(workdir, private)  # a warm case writes its folder itself: any tree

    def close(self) -> None:
        self._to_zygote.close()
        kill_group(self._proc.pid)
        self._proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)
