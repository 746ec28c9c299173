"""The first process inside a run's bubblewrap sandbox (bubblewrap.py), before any code of the case.

Usage (the keeper does this through bwrap): python sandbox_stage.py CONFIG_JSON -- COMMAND...
It makes the run's folder again in the tmpfs that covers it, seeds the budgeted host folders' tmpfs (outbox.py),
confines writes with Landlock (the run's folders, /tmp,
/dev, the probes' report folder; the probe adds a layer without the last), tells the keeper what held on the report
descriptor, then starts COMMAND with the run's key on a fresh pipe, waits for it and sends the keeper its exact wait
status (a signal stays a signal: bwrap itself would say 128 + N). It then exits, and bwrap's init with it, which ends
every process left in the sandbox; before that, with budgeted host folders, it kills every other process of the
sandbox and streams those folders' regular files to the keeper (outbox.py). This process is not dumpable: the case, the same user, can neither trace it nor
open its descriptors. Standard library only.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import struct
import sys
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from reprokit.child.keeper import StageConfig


def _sibling(name: str) -> ModuleType:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    assert spec is not None and spec.loader is not None  # a .py file's location always has a spec and a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _full(*folders: str) -> bool:
    for folder in folders:
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        if info.f_bavail * info.f_frsize < (1 << 20):
            return True
    return False


def _start(command: list[str], key: bytes | None) -> NoReturn:
    env = dict(os.environ)
    if key is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, key)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env["REPROKIT_KEY_FD"] = str(read_end)
    os.execvpe(command[0], command, env)


def main() -> NoReturn:
    config: StageConfig = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1 :]
    report = config["report_fd"]
    key: bytes | None = os.read(config["key_fd"], 256)
    os.close(config["key_fd"])
    _make_skeleton(config["skeleton"])
    _close_host_folders(config["host_fds"])
    outbox = _sibling("outbox") if config["seeds"] else None
    if outbox:  # before the case: what the host folder held, in the tmpfs the case writes
        outbox.seed(config["seeds"], config["outbox_files"])
    held = []
    abi = _sibling("landlock").confine_writes(config["writable"])
    if abi:
        held.append(f"landlock ABI {abi}")
    os.write(report, (json.dumps(held) + "\n").encode())
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    case = os.fork()
    if case == 0:
        os.close(report)
        if config["outbox_fd"] is not None:
            os.close(config["outbox_fd"])  # the case never writes what the keeper copies out
        try:
            _start(command, key)
        finally:
            os._exit(127)
    key = None
    stopped = False
    while True:
        try:
            ended, status = os.waitpid(-1, os.WUNTRACED)
        except ChildProcessError:
            status = 9
            break
        if ended == case and os.WIFSTOPPED(status):
            if os.WSTOPSIG(status) != 19:  # SIGSTOP: the case stopped its own first process, which never goes on
                continue
            stopped = True
            _end_the_others()
            break
        if ended == case:
            break
    if stopped:
        os.write(report, b"S")
    if config["budget"] and _full(config["workdir"], "/dev/shm", "/tmp"):
        os.write(report, b"F")
    os.write(report, struct.pack("i", status))  # before copy-out: whatever happens to it, the case's exit is said
    if outbox and not stopped:  # nothing else of the case runs now; then the folders' regular files, out to the keeper
        _end_the_others()
        assert config["outbox_fd"] is not None  # seeds come with the pipe they are sent on (bubblewrap.arguments)
        folders = [path for _, path in config["seeds"]]
        cut = outbox.send(folders, config["outbox_fd"], config["outbox_cap"], config["outbox_files"])
        os.close(config["outbox_fd"])
        if cut or _full(*folders):
            os.write(report, b"C")
    os._exit(0)


def _make_skeleton(entries: list[list[str | None]]) -> None:
    """What the runner put in the run's folder (home/, tmp/, a link), made again in the tmpfs that covers it."""
    for path, link in entries:
        if path is None:
            continue
        if link is not None:
            os.symlink(link, path)
        else:
            os.makedirs(path, mode=0o700, exist_ok=True)


def _close_host_folders(fds: list[int]) -> None:
    """The host folders' descriptors, given for bwrap's binds (which closes them itself): never the case's."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _end_the_others() -> None:
    """Kill every process of the sandbox but this one (and bwrap's init, which kill(-1) spares), and reap them."""
    import signal

    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


if __name__ == "__main__":
    main()
