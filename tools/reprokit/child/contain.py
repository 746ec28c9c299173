"""Keeps every process of a run inside the run, and the run away from its runner.

Usage (the runner does this for cold runs): python contain.py CONFIG_JSON -- COMMAND...; warm runs call launch() in
the zygote's child. Standard library only, like probe.py.

The process that runs this is the run's *keeper*:
- it is a child subreaper (PR_SET_CHILD_SUBREAPER): a process of the run whose parent exits (a double-forked daemon,
  a child that left the process group) is re-parented to the keeper, never to the host's init; when the case ends
  the keeper kills and reaps every process left below it, then exits the way the case did (same code or signal);
- cold host runs (config "bwrap") run inside bubblewrap (bubblewrap.py): new user (no nested ones), PID, mount, IPC,
  network (loopback only) and UTS namespaces, a seccomp filter, only what the run needs in its file system, as an
  unprivileged user (config "uid"/"gid", nobody for a root runner) that cannot signal or read the runner's processes;
  the sandbox's first process (sandbox_stage.py) reports what held and the case's exact wait status; where it never
  started, "bubblewrap failed" (and the report's failure "bubblewrap"). This is the only sandbox: warm runs (launch(), in the zygote's child) and runs inside
  a container (config "container": the container is the sandbox) get the keeper's other guards only;
- it dies with its runner (PR_SET_PDEATHSIG): then it ends every process of the run first;
- budgets: the run's processes share one memory cgroup capped at config "memory_budget" bytes (cgroup v2
  memory.max or v1 memory.limit_in_bytes, where this keeper may create one), removed after the run, and inside
  bubblewrap the run's folder, /tmp and /dev/shm are size-limited tmpfs of config "disk_budget" bytes; a run that
  reached a budget says so;
- the observation key comes on a descriptor (config "key_fd"), never in an environment, and is handed to the case's
  first process on a fresh pipe (REPROKIT_KEY_FD) that the probe reads and closes before the script runs.
- writes are confined with Landlock (the folders of $REPROKIT_WRITABLE, and the probes' report folder config
  "reports") before the probe starts, so what the record says held comes from here, not from the case's process.
What held is written to config "held" (a file in the runner's private folder) as a keeper.KeeperReport: the list of
what held, the keeper's own failure (keeper.FAILURES) and the budget reached, which the runner decides by.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from reprokit.child.keeper import KeeperConfig

_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_libc = ctypes.CDLL(None, use_errno=True)


def _sibling(name: str) -> ModuleType:
    """A module of this folder, by path: the keeper runs as a script with PYTHONSAFEPATH (no folder on sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    assert spec is not None and spec.loader is not None  # a .py file's location always has a spec and a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:  # the same modules, as mypy reads them (loaded by path below, the keeper has no package)
    from reprokit.child import bubblewrap, budgets, keeper, landlock, reaper, spool
else:
    budgets = _sibling("budgets")
    spool = _sibling("spool")
    reaper = _sibling("reaper")
    bubblewrap = _sibling("bubblewrap")
    landlock = _sibling("landlock")  # the probe's Landlock rules (confine_writes), applied here too: see _confine
    keeper = _sibling("keeper")  # the config's keys and the report's fields


def _confine(config: KeeperConfig, held: list[str]) -> None:
    """Landlock for the case's first process and all it starts, applied here, before the probe runs: the record's
    `confined` is what this keeper saw hold, never what a probe (the case's own process) says. The probe's report
    folder is writable in this layer; the probe adds a layer without it before the script runs."""
    folders = [p for p in os.environ.get("REPROKIT_WRITABLE", "").split(os.pathsep) if p]
    if folders:
        abi = landlock.confine_writes(folders + ([config["reports"]] if config["reports"] else []))
        if abi:
            held.append(f"landlock ABI {abi}")


def _drop(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("the case is still root")
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after an exec: its own /proc files are its own (warm runs)


def _read_key(config: KeeperConfig) -> bytes | None:
    fd = config["key_fd"]
    if fd is None:
        return None
    try:
        return os.read(fd, 256)
    except OSError:
        return None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def exec_with_key(command: list[str], key: bytes | None) -> NoReturn:
    """exec command with the observation key on a fresh pipe (REPROKIT_KEY_FD), not in its environment."""
    env = dict(os.environ)
    if key is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, key)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env["REPROKIT_KEY_FD"] = str(read_end)
    os.execvpe(command[0], command, env)


def _die_with_parent(parent: int | None) -> None:
    """SIGTERM when the process that started this keeper dies (the runner, or the warm zygote): end the run first."""

    def ended(signum: int, frame: FrameType | None) -> None:
        reaper.end_all_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, ended)
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if parent is not None and os.getppid() != parent:  # it died before the line above: nobody waits for this run
        ended(signal.SIGTERM, None)


def _close_host_folders(config: KeeperConfig) -> None:
    """The budgeted host folders' descriptors, which only bubblewrap's binds and copy-out use: never the case's."""
    for fd in config["budgeted_fds"]:
        try:
            os.close(fd)
        except OSError:
            pass


def launch(config: KeeperConfig, start_case: Callable[[], object]) -> NoReturn:
    """Run start_case() (which must never return: it execs or exits) with the keeper's guards but no sandbox: a warm
    run (never published) or a run inside a container (the container is its sandbox); never returns."""
    uid, gid = config["uid"], config["gid"]
    root = os.geteuid() == 0 and uid is not None
    _die_with_parent(config["parent"])
    _close_host_folders(config)
    held = [] if config["container"] else ["no bubblewrap"]
    if root and not config["container"]:  # as root, a run outside bubblewrap would see the host: never started
        keeper.write_report(config, [*held, "no sandbox for a root warm run"], "no-sandbox")
        os._exit(126)
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        held.append("subreaper")
    groups, said = budgets.run_cgroups(config)
    held += said
    read_end, write_end = os.pipe()
    case = os.fork()
    if case == 0:
        os.close(read_end)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            budgets.join_all(groups)
            drop = False
            if root and uid is not None and gid is not None:  # a container's root
                drop = all(_reachable(p, uid, gid) for p in config["needs"])
            said = [f"uid {uid}"] if drop else []
            _confine(config, said)
            os.write(write_end, (json.dumps(said) + "\n").encode())
            os.close(write_end)
            if drop and uid is not None and gid is not None:
                _drop(uid, gid)
            start_case()
        finally:
            os._exit(127)
    os.close(write_end)
    status = reaper.wait_for(case)
    status, _ = reaper.read_init_report(read_end, held, status, False)
    reaper.end_all_below()
    budgets.close_all(groups, held)
    keeper.write_report(config, held)
    reaper.relay(status)


def _reachable(path: str, uid: int, gid: int) -> bool:
    """Every folder above path searchable and path itself readable for uid/gid (a path that does not exist: yes)."""
    parts = os.path.abspath(path).split(os.sep)[1:]
    current = "/"
    try:
        for part in parts:
            if not bubblewrap.may(os.stat(current), uid, gid, 1):
                return False
            current = os.path.join(current, part)
        return bubblewrap.may(os.stat(current), uid, gid, 4)
    except OSError:
        return True


def sandboxed(config: KeeperConfig, command: list[str], key: bytes | None) -> NoReturn:
    """Run command inside bubblewrap (bubblewrap.py), kept in by this keeper as launch() keeps a run; never returns.

    Long: the order of its steps is the containment (pipes for the stage's report, the key and the seccomp filter made
    before the fork, the uid drop and the cgroup after it); split, each part would need the others' descriptors."""
    uid, gid, bwrap = config["uid"], config["gid"], config["bwrap"]
    assert bwrap is not None  # main() sends only a run with a bubblewrap here
    root = os.geteuid() == 0 and uid is not None
    _die_with_parent(config["parent"])
    held = ["subreaper"] if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 else []
    groups, said = budgets.run_cgroups(config)
    held += said
    read_end, write_end = os.pipe()
    key_read, key_write = os.pipe()
    os.write(key_write, key or b"")
    os.close(key_write)
    filter_read, filter_write = os.pipe()  # the seccomp filter's BPF program, compiled by the runner
    box_read, box_write = os.pipe() if config["budgeted"] else (None, None)  # the budgeted folders' files
    child = os.fork()
    if child == 0:
        os.close(read_end)
        os.close(filter_write)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            budgets.join_all(groups)
            if box_read is not None:
                os.close(box_read)
            for fd in (write_end, key_read, filter_read, box_write, *config["budgeted_fds"]):
                if fd is not None:
                    os.set_inheritable(fd, True)
            args = bubblewrap.arguments(config, command, write_end, key_read, filter_read, box_write)
            if root and uid is not None and gid is not None:  # an outer bwrap shows the case user the way to what
                wrapped = bubblewrap.outer(config, uid, gid, args)  # the run needs, then drops to it
                if wrapped is None:
                    _drop(uid, gid)
                args = wrapped or args
            os.execv(args[0], args)
        finally:
            os._exit(127)
    os.close(write_end)
    os.close(key_read)
    os.close(filter_read)
    try:
        os.write(filter_write, bytes.fromhex(bwrap["seccomp"]))
    except OSError:
        pass  # bwrap never started: recorded below
    os.close(filter_write)
    spooled = spool.Spool(config, box_read, box_write)
    # the spool waits on its pipe (readiness) between the watcher's checks, so copy-out runs at the disk's speed

    def tick() -> None:
        if spooled.overdue():  # copy-out past its own limit: the sandbox ends, the case's status is already said
            reaper.end_all_below()
        elif not spooled.drain(0.2):
            time.sleep(0.2)

    waits = spooled.file is not None
    status, stopped = reaper.wait_watching(
        child, "sandbox_stage.py", every=0.0 if waits else 0.2, tick=tick if waits else None
    )
    if stopped:  # the case stopped the sandbox's first process: the run ends here, recorded as stopped
        reaper.end_all_below()
        held += bubblewrap.held(config) + ["stopped by SIGSTOP"]
        budgets.close_all(groups, held)
        keeper.write_report(config, held, "stopped")
        os._exit(128 + signal.SIGSTOP)
    assert status is not None  # wait_watching gives the wait status unless the sandbox was stopped (above)
    inside: list[str] = []
    status, started = reaper.read_init_report(read_end, inside, status, True)
    copied = spooled.deliver(started and not stopped)
    _close_host_folders(config)
    if started:  # the first process inside said what held: the sandbox started
        held += bubblewrap.held(config) + ([f"uid {uid}"] if root else []) + inside
        held += [fact for fact in copied if fact not in held]
    else:  # the case never ran: recorded as the harness's failure, never as the case's exit
        print("reprokit: the run's bubblewrap sandbox did not start", file=sys.stderr)
        held.append("bubblewrap failed")
    reaper.end_all_below()
    budgets.close_all(groups, held)
    stopped = "stopped by SIGSTOP" in held  # the first process inside said the case stopped it (reaper)
    keeper.write_report(config, held, "bubblewrap" if not started else "stopped" if stopped else None)
    if stopped:  # a stop is no way of ending: said as the stopped sandbox says it
        os._exit(128 + signal.SIGSTOP)
    reaper.relay(status)


def main() -> None:
    config: KeeperConfig = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1 :]
    key = _read_key(config)
    if config["bwrap"]:
        sandboxed(config, command, key)
    launch(config, lambda: exec_with_key(command, key))


if __name__ == "__main__":
    main()
