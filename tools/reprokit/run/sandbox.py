"""Whether bubblewrap (`bwrap`) can hold this runner's cold runs (child/bubblewrap.py), asked once per runner.

It can where `bwrap` is on PATH and starts a sandbox with new user, PID, IPC, network and UTS namespaces as the user
the case runs as (nobody, for a root runner); where it cannot (not installed, no user namespaces for that user), the
runner says so in one line, runs are contained by the keeper's own namespaces (child/namespaces.py) as before, and
each record's `contained` says `no bubblewrap`. Warm runs (forks of the zygote, which has imported torch already)
are never inside bubblewrap.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys

from reprokit.run.child_setup import case_user


@functools.cache
def bubblewrap() -> tuple[dict | None, str]:
    """({"path", "version"}, "") where bwrap can hold a run, else (None, why not, in a few words)."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
        user = case_user()
        ids = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
        links = [a for p in ("/bin", "/lib", "/lib64") if os.path.islink(p) for a in ("--symlink", os.readlink(p), p)]
        trial = subprocess.run([path, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr",
                                "/usr", *links, "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true"],
                               capture_output=True, text=True, timeout=60, cwd="/", **ids)
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"bwrap did not start ({err})"
    if trial.returncode != 0:
        return None, f"bwrap cannot make its namespaces here ({trial.stderr.strip().splitlines()[-1:] or '?'})"
    found = re.search(r"(\d+(\.\d+){0,3})", version)
    return {"path": path, "version": found.group(1) if found else "?"}, ""


def sandbox_config() -> dict:
    """What contain.py needs to run a cold run inside bubblewrap (or to say it did not)."""
    found, why = bubblewrap()
    if found is None:
        _say_once(why)
        return {"bwrap_missing": True}
    return {"bwrap": found}


@functools.cache
def _say_once(why: str) -> None:
    print(f"reprokit: runs are not inside bubblewrap: {why}; they are contained by reprokit's own namespaces "
          "(CONTRIBUTING.md, Threat model)", file=sys.stderr)
