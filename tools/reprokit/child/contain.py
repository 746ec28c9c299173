"""Keeps every process of a run inside the run, and the run away from its runner.

Usage (the runner does this for cold runs): python contain.py CONFIG_JSON -- COMMAND...; warm runs call launch() in
the zygote's child. Standard library only, like probe.py.

The process that runs this is the run's *keeper*:
- it is a child subreaper (PR_SET_CHILD_SUBREAPER): a process of the run whose parent exits (a double-forked daemon,
  a child that left the process group) is re-parented to the keeper, never to the host's init; when the case ends
  the keeper kills and reaps every process left below it, then exits the way the case did (same code or signal);
- as root, it moves the run into a PID namespace and a mount namespace of its own (unshare): the first process in
  them is a small init that mounts the namespace's own /proc (the case sees no process outside its run), a private
  tmpfs on /dev/shm (gone with the run), hides folders the case user cannot enter except the paths the run needs,
  then starts the case; when that init exits the kernel kills every process left in the namespace;
- as root, the case runs as an unprivileged user (config "uid"/"gid", nobody by default): it cannot signal or read
  the runner's processes (kill, /proc/<pid>/environ), change the metadata of files it does not own, or write /proc/sys.
- it dies with its runner (PR_SET_PDEATHSIG): then it ends every process of the run first;
- as root, the run gets its own IPC namespace (no SysV segment or message queue outlives it or is seen by the next
  run) and its own network namespace with only the loopback up (torchrun's rendezvous and gloo/NCCL over loopback
  work; nothing outside the run answers, not even the host's 127.0.0.1); as another user, the same through a user
  namespace where the kernel allows one;
- budgets: the run's processes share one memory cgroup capped at config "memory_budget" bytes (cgroup v2
  memory.max or v1 memory.limit_in_bytes, where this keeper may create one), and, as root, the run's folder and its
  /dev/shm are size-limited tmpfs of config "disk_budget" bytes; a run that reached a budget says so;
- the observation key comes on a descriptor (config "key_fd"), never in an environment, and is handed to the case's
  first process on a fresh pipe (REPROKIT_KEY_FD) that the probe reads and closes before the script runs.
- with config "bwrap" (cold host runs where bubblewrap can run; sandboxed()), the case runs inside bubblewrap
  instead of the namespaces above (bubblewrap.py: only what the run needs is in its file system), as that user, with
  this keeper's subreaper, budgets and parent-death signal around it, and the sandbox's first process
  (sandbox_stage.py) reporting what held and the case's exact wait status; where it never started, "bubblewrap failed";
- writes are confined with Landlock (the folders of $REPROKIT_WRITABLE, and the probes' report folder config
  "reports") before the probe starts, so what the record says held comes from here, not from the case's process.
What held is written to config "held" (a file in the runner's private folder) as a JSON list.
"""

import ctypes
import json
import os
import signal
import struct
import sys

_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_libc = ctypes.CDLL(None, use_errno=True)


def _sibling(name):
    """A module of this folder, by path: the keeper runs as a script with PYTHONSAFEPATH (no folder on sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


namespaces = _sibling("namespaces")
budgets = _sibling("budgets")
reaper = _sibling("reaper")
bubblewrap = _sibling("bubblewrap")
landlock = _sibling("landlock")  # the probe's Landlock rules (confine_writes), applied here too: see _confine


def _confine(config, held):
    """Landlock for the case's first process and all it starts, applied here, before the probe runs: the record's
    `confined` is what this keeper saw hold, never what a probe (the case's own process) says. The probe's report
    folder is writable in this layer; the probe adds a layer without it before the script runs."""
    folders = [p for p in os.environ.get("REPROKIT_WRITABLE", "").split(os.pathsep) if p]
    if folders:
        abi = landlock.confine_writes(folders + ([config["reports"]] if config.get("reports") else []))
        if abi:
            held.append(f"landlock ABI {abi}")


def _drop(uid, gid):
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("the case is still root")
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after an exec: its own /proc files are its own (warm runs)


def _read_key(config):
    fd = config.get("key_fd")
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


def exec_with_key(command, key):
    """exec command with the observation key on a fresh pipe (REPROKIT_KEY_FD), not in its environment."""
    env = dict(os.environ)
    if key is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, key)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env["REPROKIT_KEY_FD"] = str(read_end)
    os.execvpe(command[0], command, env)


def _die_with_parent(parent):
    """SIGTERM when the process that started this keeper dies (the runner, or the warm zygote): end the run first."""

    def ended(signum, frame):
        reaper.end_all_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, ended)
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if parent is not None and os.getppid() != parent:  # it died before the line above: nobody waits for this run
        ended(signal.SIGTERM, None)


def launch(config, start_case):
    """Run start_case() (which must never return: it execs or exits) contained as above; never returns."""
    uid, gid = config.get("uid"), config.get("gid")
    root = os.geteuid() == 0 and uid is not None
    _die_with_parent(config.get("parent"))
    held = ["no bubblewrap"] if config.get("bwrap_missing") else []
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        held.append("subreaper")
    pid_namespace = False
    if root:
        pid_namespace = _libc.unshare(namespaces.CLONE_NEWPID) == 0  # for the children: the init below is its PID 1
    held += namespaces.own_namespaces(root)
    groups, said = budgets.run_cgroups(config)
    held += said
    read_end, write_end = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(read_end)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            budgets.join_all(groups)
            if pid_namespace:
                _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                _init(config, uid, gid, write_end, start_case)
            drop = root and all(namespaces.reachable(p, uid, gid) for p in config.get("needs", ()))
            said = [f"uid {uid}"] if drop else []
            _confine(config, said)
            os.write(write_end, (json.dumps(said) + "\n").encode())
            os.close(write_end)
            if drop:
                _drop(uid, gid)
            start_case()
        finally:
            os._exit(127)
    os.close(write_end)
    status = reaper.wait_for(init)
    status, _ = reaper.read_init_report(read_end, held, status, pid_namespace)
    reaper.end_all_below()
    budgets.close_all(groups, held)
    reaper.write_held(config.get("held"), held)
    reaper.relay(status)


def _init(config, uid, gid, pipe, start_case):
    """PID 1 of the run's namespaces: mounts, then the case; when the case ends, its status to the keeper and exit
    (the kernel then kills whatever is left in the namespace)."""
    held = ["pid namespace"]
    try:
        namespaces.call(_libc.unshare(namespaces.CLONE_NEWNS), "unshare")
        ns = namespaces
        ns.mount(None, "/", None, ns.MS_REC | ns.MS_PRIVATE)  # nothing mounted here reaches the host
        ns.mount("proc", "/proc", "proc", ns.MS_NOSUID | ns.MS_NODEV | ns.MS_NOEXEC)  # this namespace's processes only
        budget = config.get("disk_budget")
        ns.mount("tmpfs", "/dev/shm", "tmpfs", ns.MS_NOSUID | ns.MS_NODEV, "mode=1777" + (f",size={budget}" if budget else ""))
        held.append("private /dev/shm")
        namespaces.expose(config.get("needs", ()), uid, gid, "/dev/shm/.reprokit-stage")
        if budget and config.get("workdir"):
            namespaces.bounded_workdir(config["workdir"], budget, uid, gid)
            held.append(f"disk budget {budget >> 20} MiB")
    except OSError as err:
        print(f"reprokit: the run's mount namespace is incomplete ({err})", file=sys.stderr)
    drop = all(namespaces.reachable(p, uid, gid) for p in config.get("needs", ()))
    if drop:
        held.append(f"uid {uid}")
    _confine(config, held)
    os.write(pipe, (json.dumps(held) + "\n").encode())
    case = os.fork()
    if case == 0:
        os.close(pipe)
        try:
            if drop:
                _drop(uid, gid)
            start_case()
        finally:
            os._exit(127)
    status = reaper.wait_for(case)
    if any(h.startswith("disk budget") for h in held) and budgets.full(config["workdir"], "/dev/shm"):
        os.write(pipe, b"F")
    os.write(pipe, struct.pack("i", status))
    os._exit(0)


def sandboxed(config, command, key):
    """Run command inside bubblewrap (bubblewrap.py), kept in by this keeper as launch() keeps a run; never returns."""
    uid, gid = config.get("uid"), config.get("gid")
    root = os.geteuid() == 0 and uid is not None
    _die_with_parent(config.get("parent"))
    held = ["subreaper"] if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 else []
    groups, said = budgets.run_cgroups(config)
    held += said
    read_end, write_end = os.pipe()
    key_read, key_write = os.pipe()
    os.write(key_write, key or b"")
    os.close(key_write)
    child = os.fork()
    if child == 0:
        os.close(read_end)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            budgets.join_all(groups)
            if root:  # the way to what the run needs, for the case user, in a mount namespace of this process only
                _private_view(config, uid, gid)
                _drop(uid, gid)
            for fd in (write_end, key_read):
                os.set_inheritable(fd, True)
            args = bubblewrap.arguments(config, command, write_end, key_read)
            os.execv(args[0], args)
        finally:
            os._exit(127)
    os.close(write_end)
    os.close(key_read)
    status = reaper.wait_for(child)
    inside = []
    status, started = reaper.read_init_report(read_end, inside, status, True)
    if started:  # the first process inside said what held: the sandbox started
        held += bubblewrap.held(config) + ([f"uid {uid}"] if root else []) + inside
    else:  # the case never ran: recorded as the harness's failure, never as the case's exit
        print("reprokit: the run's bubblewrap sandbox did not start", file=sys.stderr)
        held.append("bubblewrap failed")
    reaper.end_all_below()
    budgets.close_all(groups, held)
    reaper.write_held(config.get("held"), held)
    reaper.relay(status)


def _private_view(config, uid, gid):
    namespaces.call(_libc.unshare(namespaces.CLONE_NEWNS), "unshare")
    namespaces.mount(None, "/", None, namespaces.MS_REC | namespaces.MS_PRIVATE)
    namespaces.mount("tmpfs", "/dev/shm", "tmpfs", namespaces.MS_NOSUID | namespaces.MS_NODEV, "mode=700,size=1m")
    namespaces.expose([*config.get("needs", ()), *config.get("rw", ()), config["workdir"]], uid, gid,
                      "/dev/shm/.reprokit-stage")


def main():
    config = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    key = _read_key(config)
    if config.get("bwrap"):
        sandboxed(config, command, key)
    launch(config, lambda: exec_with_key(command, key))


if __name__ == "__main__":
    main()
