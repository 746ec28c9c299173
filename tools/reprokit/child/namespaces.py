"""Namespaces and mounts for a run's keeper (contain.py): the case's view of the file system (only the paths it needs
below folders it cannot enter), and an IPC, network (loopback only) and UTS namespace of its own.
Standard library only; loaded by path, like contain.py."""

import ctypes
import os
import stat
import struct
import sys

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER, CLONE_NEWUTS = (
    0x00020000, 0x20000000, 0x08000000, 0x40000000, 0x10000000, 0x04000000)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
MNT_DETACH = 2
libc = ctypes.CDLL(None, use_errno=True)


def call(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enc(text):
    return text.encode() if text is not None else None


def mount(source, target, fstype, flags, data=None):
    call(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def may(info, uid, gid, bit):
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
            if not may(os.stat(current), uid, gid, 1):
                return False
            current = os.path.join(current, part)
        return may(os.stat(current), uid, gid, 4)
    except OSError:
        return True  # a path that does not exist needs nothing


def expose(paths, uid, gid, stage):
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
        if node and not may(info, uid, gid, 1):
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
                mount(source, held, None, MS_BIND | MS_REC)
                kept.append((name, "dir" if stat.S_ISDIR(entry.st_mode) else "file", held))
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=64k")
            for name, kind, what in kept:
                target = os.path.join(folder, name)
                if kind == "link":
                    os.symlink(what, target)
                    continue
                if kind == "dir":
                    os.mkdir(target)
                else:
                    open(target, "wb").close()
                mount(what, target, None, MS_BIND | MS_REC)
                libc.umount2(what.encode(), MNT_DETACH)
        for name, child in node.items():
            walk(os.path.join(folder, name), child)

    walk("/", tree)


def loopback_up():
    """Bring up `lo` in this (new) network namespace: 127.0.0.1 and ::1 then answer, nothing else exists."""
    import fcntl
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(sock, 0x8914, struct.pack("16sh22x", b"lo", flags | 0x1 | 0x40))  # SIOCSIFFLAGS: UP, RUNNING


def own_namespaces(root):
    """A fresh IPC, network and UTS namespace for this keeper and everything below it; what held."""
    held = []
    if not root:  # an unprivileged user namespace, mapping this user onto itself, lets a user make the others
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(CLONE_NEWUSER) != 0:
            return held
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
        except OSError:
            return held
    if libc.unshare(CLONE_NEWIPC) == 0:
        held.append("ipc namespace")
    if libc.unshare(CLONE_NEWNET) == 0:
        try:
            loopback_up()
            held.append("network namespace (loopback only)")
        except OSError as err:
            print(f"reprokit: loopback of the run's network namespace is down ({err})", file=sys.stderr)
        # The host's name resolves to an address this namespace lacks: gloo and torchrun would bind to it. As in a
        # container run (hostname "localhost"), the run gets a UTS namespace whose name resolves to the loopback.
        if libc.unshare(CLONE_NEWUTS) == 0:
            libc.sethostname(b"localhost", 9)
    return held


def bounded_workdir(workdir, budget, uid, gid):
    """The run's folder as a tmpfs of `budget` bytes holding what the runner put there (home/, tmp/, empty)."""
    entries = sorted(os.listdir(workdir))
    mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, f"size={budget},mode=0700,uid={uid},gid={gid}")
    for name in entries:
        os.mkdir(os.path.join(workdir, name), 0o700)
        os.chown(os.path.join(workdir, name), uid, gid)
    os.chdir(workdir)  # the case's working directory is the tmpfs, not the folder it covers
