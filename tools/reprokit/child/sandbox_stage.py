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

import ctypes
import importlib.util
import json
import os
import struct
import sys


def _sibling(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _full(*folders):
    for folder in folders:
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        if info.f_bavail * info.f_frsize < (1 << 20):
            return True
    return False


def _start(command, key):
    env = dict(os.environ)
    if key is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, key)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env["REPROKIT_KEY_FD"] = str(read_end)
    os.execvpe(command[0], command, env)


def main():
    config = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    report, key = config["report_fd"], None
    if config.get("key_fd") is not None:
        key = os.read(config["key_fd"], 256)
        os.close(config["key_fd"])
    for path, link in config.get("skeleton", ()):
        if link is not None:
            os.symlink(link, path)
        else:
            os.makedirs(path, mode=0o700, exist_ok=True)
    outbox = _sibling("outbox") if config.get("seeds") else None
    if outbox:  # before the case: what the host folder held, in the tmpfs the case writes
        outbox.seed(config["seeds"])
    held = []
    abi = _sibling("landlock").confine_writes(config["writable"])
    if abi:
        held.append(f"landlock ABI {abi}")
    os.write(report, (json.dumps(held) + "\n").encode())
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    case = os.fork()
    if case == 0:
        os.close(report)
        if config.get("outbox_fd") is not None:
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
    if config.get("budget") and _full(config["workdir"], "/dev/shm", "/tmp"):
        os.write(report, b"F")
    if outbox and not stopped:  # nothing else of the case runs now; then the folders' regular files, out to the keeper
        _end_the_others()
        folders = [path for _, path in config["seeds"]]
        cut = outbox.send(folders, config["outbox_fd"], config["outbox_cap"], config.get("outbox_files") or 1 << 62)
        os.close(config["outbox_fd"])
        if cut or _full(*folders):
            os.write(report, b"C")
    os.write(report, struct.pack("i", status))
    os._exit(0)


def _end_the_others():
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
