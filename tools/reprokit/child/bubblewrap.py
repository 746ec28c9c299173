"""A run inside bubblewrap (`bwrap`, the sandbox Flatpak uses), for its keeper (contain.py).

The case sees a fresh mount namespace holding only what the run needs: the system's programs and libraries (/usr and
its links, a few files of /etc, /sys) and the interpreter with its packages, read-only; the case's folder and the
probe read-only; the run's folder, its own /tmp and /dev/shm (tmpfs of the disk budget) and the probes' report folder
writable; devices of the run's accelerator family where it has one. Nothing else of the host: no other case, no
checkout, no host socket file. Its user, PID, IPC, network (loopback only) and UTS namespaces are new; bwrap dies with
its keeper (--die-with-parent) and the case cannot reach the runner's terminal (--new-session).

As root the keeper first covers, in a mount namespace of its own, each folder that the case user cannot enter on the
way to what the run needs (a Python under /root) with one holding only that way (namespaces.expose), then drops to
that user and starts bwrap unprivileged: the run's processes are that user on the host too, with no capability.
Standard library only; loaded by path, like contain.py.
"""

import glob
import json
import os
import sys

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("passwd", "group", "hosts", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
       "localtime", "os-release")
DEVICES = {"cuda": ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/nvidia-uvm*", "/dev/kfd", "/dev/dri"),
           "npu": ("/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc")}
STAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_stage.py")
LANDLOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")  # the stage's and the probe's


def _under(path, folders):
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _read_only(config):
    """The paths bound read-only besides the system's: the interpreter, its packages, the case folder, the probe."""
    system = [p for p in SYSTEM if os.path.isdir(p) and not os.path.islink(p)]
    paths = sorted({p for p in config.get("needs", ()) if os.path.exists(p)} | {STAGE, LANDLOCK})
    writable = [config["workdir"], *config.get("rw", ())]
    return [p for p in paths if not _under(p, system) and not _under(p, writable)]


def _mkdirs(workdir):
    """What the runner put in the run's folder before the run (home/, tmp/, a link to the shared headers), to be made
    again in the tmpfs that covers it."""
    found = []
    for folder, dirs, files in os.walk(workdir):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or os.path.isdir(path):
                found.append([path, os.readlink(path) if os.path.islink(path) else None])
    return found


def arguments(config, command, report_fd, key_fd):
    """bwrap's command line for the run; `command` (the probe) runs behind sandbox_stage.py."""
    budget, workdir = config.get("disk_budget"), config["workdir"]
    size = ["--size", str(budget)] if budget else []
    args = [config["bwrap"]["path"], "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "localhost"]
    if config.get("uid") is not None:
        args += ["--uid", str(config["uid"]), "--gid", str(config["gid"])]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += [arg for name in ETC if os.path.exists(f"/etc/{name}") for arg in ("--ro-bind", f"/etc/{name}", f"/etc/{name}")]
    args += ["--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"]
    for pattern in DEVICES.get(os.environ.get("REPRO_DEVICE", "cpu").split(":")[0], ()):  # the run's device family
        args += [arg for node in sorted(glob.glob(pattern)) for arg in ("--dev-bind", node, node)]
    args += [*size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp", *size, "--tmpfs", workdir]
    for path in _read_only(config):
        args += ["--ro-bind", path, path]
    for path in config.get("rw", ()):
        if os.path.isdir(path):
            args += ["--bind", path, path]
    stage = {"report_fd": report_fd, "key_fd": key_fd, "skeleton": _mkdirs(workdir), "workdir": workdir,
             "writable": [p for p in os.environ.get("REPROKIT_WRITABLE", "").split(os.pathsep) if p]
             + ["/tmp", *config.get("rw", ())], "budget": bool(budget)}
    return args + ["--chdir", workdir, "--", sys.executable, STAGE, json.dumps(stage), "--", *command]


def held(config):
    """What bubblewrap holds for the run, as the record says it."""
    found = [f"bubblewrap {config['bwrap']['version']}", "pid namespace", "mount namespace", "private /dev/shm",
             "ipc namespace", "network namespace (loopback only)"]
    if config.get("disk_budget"):
        found.append(f"disk budget {config['disk_budget'] >> 20} MiB")
    return found
