"""Which torch releases a triage runs, and where each comes from.

By default two: the release the issue reports (collect_env's, a version named in the body, else the newest stable
published before it was opened), installed on demand from the index (any release it has, recorded or not), and the
target's newest stable release; nightly only when asked. `--here` runs this interpreter's torch alone; `--releases`
runs exactly those given. Environments are built one at a time, when a run needs them (torch_envs), so a triage that
stops at the reported release builds one; before any is built, `announce` says what will be downloaded."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from reprokit.model.matrix import Target
from reprokit.model.releases import release_key
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.run import torch_envs
from reprokit.store.views import release_of

RELEASE = re.compile(r"\d+\.\d+\.\d+")  # an installable release: not a dev build, "main" or a local path


# Oldest first; nightly after every release; what is not a version (an interpreter's path) before every release.
order = partial(release_key, labels="nightly-last")


def newest_stable(target: Target) -> str:
    """The target's newest stable release: the newest of its pin and its recorded history."""
    stable = [v for v in (target.pins.torch, *target.pins.history) if RELEASE.fullmatch(str(v))]
    return max(stable, key=order)


class Offered(NamedTuple):
    release: str
    python: str | None  # None: not available here (why says why)
    why: str = ""
    transient: bool = False  # the release exists but could not be installed now: nothing may stand in for it


@dataclass(frozen=True)
class Plan:
    """The releases a triage runs, oldest first, and what it takes to run them."""

    releases: tuple[str, ...]
    reported: str | None  # the release the issue is judged on, where it is one of `releases`
    here: bool = False

    def announce(self, target: str) -> str:
        """One line before anything is built: the releases, what must be built, the download and the disk."""
        if self.here:
            return f"triage: this environment's torch only ({sys.executable})"
        to_build = [r for r in self.releases if not torch_envs.built(r)]
        roles = {r: (" (reported)" if r == self.reported else "") for r in self.releases}
        cost = (
            (f"to build: {', '.join(to_build)}, {torch_envs.estimate(len(to_build))}; each only when a run needs it")
            if to_build
            else "nothing to build"
        )
        return f"triage on {target}: torch {', '.join(r + roles[r] for r in self.releases)}; {cost}"


def plan(
    reported: str | None, target: Target, *, nightly: bool = False, given: list[str] | None = None, here: bool = False
) -> Plan:
    """The releases to run: `given` as is (the reported one added where installable), else the reported release and
    the target's newest stable (nightly too where asked)."""
    if here:
        return Plan((), None, here=True)
    installable = reported if reported and RELEASE.fullmatch(reported) else None
    if given:
        chosen = [*given, *([installable] if installable else [])]
    else:
        chosen = [*([installable] if installable else []), newest_stable(target), *(["nightly"] if nightly else [])]
    paths = [r for r in dict.fromkeys(chosen) if "/" in r]
    named = sorted((r for r in dict.fromkeys(chosen) if "/" not in r), key=order)
    return Plan((*paths, *named), installable)


READ_VERSION_TIMEOUT = 120.0  # the least time `import torch` is given to say its version (a busy machine is slow)


def version_of(python: str, timeout: float) -> str:
    """The torch release an interpreter holds (a local build's suffix dropped); one line where it cannot be read."""
    try:
        done = subprocess.run(
            [python, "-c", "import torch; print(torch.__version__)"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            f"{python}: `import torch` did not finish in {timeout:.0f} s (the run's timeout; a busy "
            "machine: give --timeout more)"
        ) from None
    except OSError as err:
        raise InputError(f"{python}: cannot be run ({err.strerror})") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"{python}: `import torch` failed ({last[:200]})")
    return release_of((done.stdout.strip().splitlines() or ["?"])[-1])


def offer(release: str, timeout: float, log=print, family: str = "cpu", index_url: str | None = None) -> Offered:
    """One release's interpreter, built on first use; where it cannot be had, why (and whether trying later may)."""
    if "/" in release:
        return Offered(version_of(release, max(timeout, READ_VERSION_TIMEOUT)), release)
    try:
        python = str(torch_envs.ensure(release, index_url, log=log, family=family).python)
    except torch_envs.BuildFailed as err:
        log(f"torch {release}: could not be installed now ({err})")
        return Offered(release, None, f"could not be installed now ({err})", transient=True)
    except InputError as err:
        log(f"torch {release}: not available here ({err})")
        return Offered(release, None, "not available here (no build for this Python and platform)")
    return Offered(release, python)


def reference(reported: str | None, available: list[str]) -> str | None:
    """The release whose run gives the signature: the reported one, else the nearest available not newer than it,
    else (a report older than every release here, or none named) the oldest available, which the standing names as
    the stand-in it is."""
    if not available:
        return None
    if reported in available:
        return reported
    older = [r for r in available if reported and r != "nightly" and order(r) <= order(reported)]
    return older[-1] if older else available[0]


def between(history: list[str], low: str, high: str) -> list[str]:
    """The recorded releases strictly between two run ones, oldest first (what --since bisects)."""
    return sorted((r for r in history if RELEASE.fullmatch(r) and order(low) < order(r) < order(high)), key=order)
