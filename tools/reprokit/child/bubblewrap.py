"""A run inside bubblewrap (`bwrap`, the sandbox Flatpak uses), for its keeper (contain.py).

The case sees a fresh mount namespace holding only what the run needs: the system's programs and libraries (/usr and
its links, a few files of /etc, /sys) and the interpreter with its packages, read-only; the case's folder and the
probe read-only; the run's folder, its own /tmp and /dev/shm (tmpfs of the disk budget) and the probes' report folder
writable; devices of the run's accelerator family where it has one. Nothing else of the host: no other case, no
checkout, no host socket file. Its user, PID, IPC, network (loopback only) and UTS namespaces are new; bwrap dies with
its keeper (--die-with-parent) and the case cannot reach the runner's terminal (--new-session).

Nested user namespaces are disabled (--disable-userns) and a seccomp filter (run/syscall_filter.py, compiled by the
runner) is loaded for the sandbox's first process and everything it starts. /sys shows the CPUs and memory nodes only
(accelerator runs: the devices too, never the network interfaces or cgroups); in /dev the case may write its device
nodes and the size-limited /dev/shm only (Landlock: child_setup's REPROKIT_WRITABLE), so /dev holds nothing it made.

As root the keeper starts bwrap twice: an outer one, as root, that only covers each folder the case user cannot enter
on the way to what the run needs (a Python under /root) with a tmpfs holding only that way, then drops to that user
(this file, run as a script) and starts the inner, unprivileged bwrap: the run's processes are that user on the host
too, with no capability. Standard library only; loaded by path, like contain.py.
"""

from __future__ import annotations

import glob
import json
import os
import stat
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from reprokit.child.keeper import KeeperConfig, StageConfig

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "passwd",
    "group",
    "hosts",
    "nsswitch.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "os-release",
)
DEVICES = {
    "cuda": ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/nvidia-uvm*", "/dev/kfd", "/dev/dri"),
    "npu": ("/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc"),
}
STAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_stage.py")
LANDLOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")  # the stage's and the probe's
OUTBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "outbox.py")  # the stage's: budgeted host folders
FOLDER_TREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "folder_tree.py")  # outbox's walk
STAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stages.py")  # the probe's
SEEDS = "/run/reprokit-seed"  # where a budgeted host folder is seen read-only inside, to seed its tmpfs


SYS_CPU = ("/sys/devices/system/cpu", "/sys/devices/system/node")  # torch's CPU count, caches and NUMA nodes
SYS_HIDDEN = ("/sys/fs/cgroup", "/sys/class/net", "/sys/devices/virtual/net", "/sys/kernel")  # accelerator runs


def may(info: os.stat_result, uid: int, gid: int, bit: int) -> bool:
    """Whether uid/gid (no supplementary groups) has permission `bit` (4 read, 1 search) by the mode bits."""
    if info.st_uid == uid:
        return bool(info.st_mode >> 6 & bit)
    if info.st_gid == gid:
        return bool(info.st_mode >> 3 & bit)
    return bool(info.st_mode & bit)


def covers(paths: list[str], uid: int, gid: int) -> list[str]:
    """The outer bwrap's arguments: each folder on the way to `paths` that uid/gid cannot search (/root, mode 700)
    covered by a tmpfs holding only the entries on that way, bound back (links made again); [] where none is."""
    tree: dict[str, dict] = {}
    for path in paths:
        for variant in {os.path.abspath(path), os.path.realpath(path)}:
            node = tree
            for part in variant.split(os.sep)[1:]:
                if part:
                    node = node.setdefault(part, {})
    args: list[str] = []

    def walk(folder: str, node: dict[str, dict]) -> None:  # the paths' own folders: a few levels, not a case's tree
        try:
            info = os.stat(folder)
        except OSError:
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        if node and not may(info, uid, gid, 1):
            args.extend(["--perms", "0755", "--tmpfs", folder])
            for name in node:
                source = os.path.join(folder, name)
                try:
                    entry = os.lstat(source)
                except OSError:
                    continue
                if stat.S_ISLNK(entry.st_mode):
                    args.extend(["--symlink", os.readlink(source), source])
                else:
                    args.extend(["--bind", source, source])
        for name, child in node.items():
            walk(os.path.join(folder, name), child)

    walk("/", tree)
    return args


def _under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _read_only(config: KeeperConfig) -> list[str]:
    """The paths bound read-only besides the system's: the interpreter, its packages, the case folder, the probe."""
    system = [p for p in SYSTEM if os.path.isdir(p) and not os.path.islink(p)]
    paths = sorted({p for p in config["needs"] if os.path.exists(p)} | {STAGE, LANDLOCK, OUTBOX, FOLDER_TREE, STAGES})
    writable = [config["workdir"], *config["rw"]]
    return [p for p in paths if not _under(p, system) and not _under(p, writable)]


def _mkdirs(workdir: str) -> list[list[str | None]]:
    """What the runner put in the run's folder before the run (home/, tmp/, a link to the shared headers), to be made
    again in the tmpfs that covers it (walked without recursion, like every tree here)."""
    found: list[list[str | None]] = []
    pending = [workdir]
    while pending:
        folder = pending.pop()
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                found.append([path, os.readlink(path)])
            elif os.path.isdir(path):
                found.append([path, None])
                pending.append(path)
    return sorted(found, key=lambda entry: str(entry[0]))


def arguments(
    config: KeeperConfig, command: list[str], report_fd: int, key_fd: int, seccomp_fd: int, outbox_fd: int | None = None
) -> list[str]:
    """bwrap's command line for the run; `command` (the probe) runs behind sandbox_stage.py."""
    budget, workdir, bwrap = config["disk_budget"], config["workdir"], config["bwrap"]
    assert bwrap is not None  # only a run inside bubblewrap is given its command line
    size = ["--size", str(budget)] if budget else []
    args = [
        bwrap["path"],
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "localhost",
        "--seccomp",
        str(seccomp_fd),
    ]
    if config["uid"] is not None:
        args += ["--uid", str(config["uid"]), "--gid", str(config["gid"])]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += [
        arg for name in ETC if os.path.exists(f"/etc/{name}") for arg in ("--ro-bind", f"/etc/{name}", f"/etc/{name}")
    ]
    family = os.environ.get("REPRO_DEVICE", "cpu").split(":")[0]
    if family in DEVICES:  # the driver reads the PCI tree; the network's and the host's cgroups stay hidden
        args += ["--ro-bind-try", "/sys", "/sys", *[a for p in SYS_HIDDEN if os.path.isdir(p) for a in ("--tmpfs", p)]]
    else:
        args += [a for p in SYS_CPU for a in ("--ro-bind-try", p, p)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for pattern in DEVICES.get(family, ()):  # the run's device family
        args += [arg for node in sorted(glob.glob(pattern)) for arg in ("--dev-bind", node, node)]
    args += [*size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp", *size, "--tmpfs", workdir]
    for path in _read_only(config):
        args += ["--ro-bind", path, path]
    budgeted = config["budgeted"]
    for path in config["rw"]:
        if os.path.isdir(path) and path not in budgeted:
            args += ["--bind", path, path]
    cache = ["--size", str(config["cache_budget"])] if config["cache_budget"] else []
    seeds = [[f"{SEEDS}/{n}", path] for n, path in enumerate(budgeted)]
    for fd, (seed, path) in zip(
        config["budgeted_fds"], seeds, strict=True
    ):  # the host folder read-only (by the descriptor the
        args += ["--ro-bind-fd", str(fd), seed, *cache, "--tmpfs", path]  # runner opened: no link followed), and
    stage: StageConfig = {  # the case's writes in a tmpfs of the cache budget
        "report_fd": report_fd,
        "key_fd": key_fd,
        "skeleton": _mkdirs(workdir),
        "workdir": workdir,
        "seeds": seeds,
        "host_fds": config["budgeted_fds"],
        "outbox_fd": outbox_fd,
        "outbox_cap": config["cache_budget"],
        "outbox_files": config["cache_files"] or 1 << 62,
        "writable": [p for p in os.environ.get("REPROKIT_WRITABLE", "").split(os.pathsep) if p]
        + ["/tmp", *config["rw"]],
        "budget": bool(budget),
    }
    return args + ["--chdir", workdir, "--", sys.executable, STAGE, json.dumps(stage), "--", *command]


def held(config: KeeperConfig) -> list[str]:
    """What bubblewrap holds for the run, as the record says it."""
    bwrap = config["bwrap"]
    found = [
        f"bubblewrap {bwrap['version'] if bwrap else '?'}",
        "no nested user namespaces",
        "seccomp filter",
        "pid namespace",
        "mount namespace",
        "private /dev/shm",
        "ipc namespace",
        "network namespace (loopback only)",
    ]
    if config["disk_budget"]:
        found.append(f"disk budget {config['disk_budget'] >> 20} MiB")
    if config["budgeted"] and config["cache_budget"]:
        found.append(f"cache budget {config['cache_budget'] >> 20} MiB")
    return found


def outer(config: KeeperConfig, uid: int, gid: int, inner: list[str]) -> list[str] | None:
    """As root: the outer bwrap (covers() only, no namespace but the mount one) that drops to uid/gid and starts
    `inner`; `inner` itself where the case user can reach every path already."""
    bwrap = config["bwrap"]
    assert bwrap is not None  # only a run inside bubblewrap has an outer one
    paths = [
        *_read_only(config),
        *config["rw"],
        config["workdir"],
        sys.executable,
        bwrap["path"],
        os.path.dirname(os.path.dirname(os.path.dirname(bwrap["path"]))),
    ]  # the wheel's own libs
    cover = covers(paths, uid, gid)
    if not cover:
        return None
    return [
        bwrap["path"],
        "--dev-bind",
        "/",
        "/",
        *cover,
        "--die-with-parent",
        "--",
        sys.executable,
        os.path.abspath(__file__),
        str(uid),
        str(gid),
        "--",
        *inner,
    ]


def _drop_and_exec() -> NoReturn:
    """python bubblewrap.py UID GID -- COMMAND...: the outer bwrap's command, as root; COMMAND as uid/gid."""
    uid, gid = int(sys.argv[1]), int(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1 :]
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("reprokit: the sandbox's user is still root")
    os.execv(command[0], command)


if __name__ == "__main__":
    _drop_and_exec()
