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
What held is written to config "held" (a file in the runner's private folder) as a JSON list.
"""

import ctypes
import json
import os
import signal
import stat
import struct
import sys

_CLONE_NEWNS, _CLONE_NEWPID = 0x00020000, 0x20000000
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _call(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enc(text):
    return text.encode() if text is not None else None


def _mount(source, target, fstype, flags, data=None):
    _call(_libc.mount(_enc(source), _enc(target), _enc(fstype), ctypes.c_ulong(flags), _enc(data)), f"mount {target}")


def _may(info, uid, gid, bit):
    """Whether uid/gid (no supplementary groups) has permission `bit` (4 read, 1 search) by the mode bits."""
    if info.st_uid == uid:
        return bool(info.st_mode >> 6 & bit)
    if info.st_gid == gid:
        return bool(info.st_mode >> 3 & bit)
    return bool(info.st_mode & bit)


def reachable(path, uid, gid):
    """Every folder above path searchable and path itself readable for uid/gid."""
    parts = os.path.abspath(path).split(os.sep)[1:]
    current = "/"
    try:
        for part in parts:
            if not _may(os.stat(current), uid, gid, 1):
                return False
            current = os.path.join(current, part)
        return _may(os.stat(current), uid, gid, 4)
    except OSError:
        return True  # a path that does not exist needs nothing


def _expose(paths, uid, gid, stage):
    """In this mount namespace, make each of `paths` reachable for uid/gid: a folder above one that the user cannot
    enter (/root, mode 700) is covered by an empty tmpfs holding only the entries on the way to the paths (bind
    mounts of the originals); the rest of it is hidden from the case."""
    tree = {}
    for path in paths:
        for variant in {os.path.abspath(path), os.path.realpath(path)}:
            node = tree
            for part in variant.split(os.sep)[1:]:
                if part:
                    node = node.setdefault(part, {})
    os.makedirs(stage, mode=0o700, exist_ok=True)
    counter = [0]

    def walk(folder, node):
        try:
            info = os.stat(folder)
        except OSError:
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        if node and not _may(info, uid, gid, 1):
            counter[0] += 1
            hold = os.path.join(stage, str(counter[0]))
            os.mkdir(hold, 0o700)
            kept = []
            for name in node:
                source = os.path.join(folder, name)
                try:
                    entry = os.lstat(source)
                except OSError:
                    continue
                if stat.S_ISLNK(entry.st_mode):
                    kept.append((name, "link", os.readlink(source)))
                    continue
                held = os.path.join(hold, name)
                if stat.S_ISDIR(entry.st_mode):
                    os.mkdir(held)
                else:
                    open(held, "wb").close()
                _mount(source, held, None, _MS_BIND | _MS_REC)
                kept.append((name, "dir" if stat.S_ISDIR(entry.st_mode) else "file", held))
            _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=755,size=64k")
            for name, kind, what in kept:
                target = os.path.join(folder, name)
                if kind == "link":
                    os.symlink(what, target)
                    continue
                if kind == "dir":
                    os.mkdir(target)
                else:
                    open(target, "wb").close()
                _mount(what, target, None, _MS_BIND | _MS_REC)
                _libc.umount2(what.encode(), _MNT_DETACH)
        for name, child in node.items():
            walk(os.path.join(folder, name), child)

    walk("/", tree)


def _drop(uid, gid):
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("the case is still root")
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after an exec: its own /proc files are its own (warm runs)


def _descendants(root):
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
        frontier = [pid for pid, ppid in parent_of.items() if ppid in frontier]
        found += frontier
    return found


def _end_all_below():
    """Kill and reap every process left below this one (a subreaper: orphans of the run are its children)."""
    me = os.getpid()
    while True:
        for pid in _descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            return


def _relay(status):
    """Exit as the case did: the same code, or death by the same signal (without a core of this process)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.WIFSIGNALED(status):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _wait_for(pid):
    """Wait for pid, reaping whatever else ends meanwhile (orphans re-parented here); its wait status."""
    while True:
        try:
            ended, status = os.wait()
        except ChildProcessError:
            return 9  # killed from outside
        if ended == pid:
            return status


def launch(config, start_case):
    """Run start_case() (which must never return: it execs or exits) contained as above; never returns."""
    uid, gid = config.get("uid"), config.get("gid")
    root = os.geteuid() == 0 and uid is not None
    held = []
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        held.append("subreaper")
    namespaces = False
    if root:
        namespaces = _libc.unshare(_CLONE_NEWPID) == 0  # for the children: the init below is its PID 1
    read_end, write_end = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(read_end)
        try:
            if namespaces:
                _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                _init(config, uid, gid, write_end, start_case)
            drop = root and all(reachable(p, uid, gid) for p in config.get("needs", ()))
            os.write(write_end, (json.dumps([f"uid {uid}"] if drop else []) + "\n").encode())
            os.close(write_end)
            if drop:
                _drop(uid, gid)
            start_case()
        finally:
            os._exit(127)
    os.close(write_end)
    status = _wait_for(init)
    report = b""
    while chunk := os.read(read_end, 4096):
        report += chunk
    lines = report.split(b"\n", 1)
    try:
        held += json.loads(lines[0])
    except ValueError:
        pass
    if namespaces:  # the init relayed the case's status after its own report line
        tail = lines[1] if len(lines) > 1 else b""
        status = struct.unpack("i", tail[:4])[0] if len(tail) >= 4 else 9  # no status: the init was killed
    _end_all_below()
    if config.get("held"):
        try:  # a case without Landlock could have put a link there: then nothing is recorded as held
            fd = os.open(config["held"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.write(fd, json.dumps(held).encode())
            os.close(fd)
        except OSError:
            pass
    _relay(status)


def _init(config, uid, gid, pipe, start_case):
    """PID 1 of the run's namespaces: mounts, then the case; when the case ends, its status to the keeper and exit
    (the kernel then kills whatever is left in the namespace)."""
    held = ["pid namespace"]
    try:
        _call(_libc.unshare(_CLONE_NEWNS), "unshare")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing mounted here reaches the host
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)  # this namespace's processes only
        _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")
        held.append("private /dev/shm")
        _expose(config.get("needs", ()), uid, gid, "/dev/shm/.reprokit-stage")
    except OSError as err:
        print(f"reprokit: the run's mount namespace is incomplete ({err})", file=sys.stderr)
    drop = all(reachable(p, uid, gid) for p in config.get("needs", ()))
    if drop:
        held.append(f"uid {uid}")
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
    status = _wait_for(case)
    os.write(pipe, struct.pack("i", status))
    os._exit(0)


def main():
    config = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    launch(config, lambda: os.execvp(command[0], command))


if __name__ == "__main__":
    main()
