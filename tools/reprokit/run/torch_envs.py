"""One Python environment per torch release, built from the registry with uv, for runs of other releases than the
one installed (`reprokit run --torch 2.10.1`, the history, bisection).

Environments live under $REPROKIT_CACHE/envs/torch-<version> (default ~/.cache/reprokit); uv's one shared cache
($REPROKIT_CACHE/uv) stores each wheel once and hard-links it into every environment, so the libraries common to
several releases are not downloaded or stored twice.

Where torch comes from: an accelerator target's own index; for the CPU target, its CPU index where that is
reachable, else what this machine's pip configuration serves (its index, extra indexes and find-links: a CPU wheel
on local disk is taken before a CUDA build from the registry). A release equal to this environment's own torch is
not built at all: this interpreter runs it. `reprokit envs` lists the environments with their sizes and frees
them (run/env_cache.py).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version

from reprokit.images.wheelhouse import index_reachable
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.run.env_cache import cache_root, cache_size, human_size, listing, uv_binary

NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly/cpu"
# Older releases' inductor imports setuptools; numpy is what the cases use besides torch.
EXTRAS = ("setuptools", "numpy")
# Releases before 2.4 need older tools: their torch.utils.cpp_extension imports pkg_resources, which setuptools 82
# removed (Dynamo then cannot import at all), and their wheels were built against numpy 1.x.
OLD_RELEASE_EXTRAS = ("setuptools<81", "numpy<2")
NEEDS_OLD_TOOLS_BEFORE = (2, 4)


def extras(version: str) -> tuple[str, ...]:
    """What an environment of torch==version gets besides torch: the tools that release can import."""
    try:
        release = Version(version).release
    except InvalidVersion:  # "nightly"
        return EXTRAS
    return OLD_RELEASE_EXTRAS if release[:2] < NEEDS_OLD_TOOLS_BEFORE else EXTRAS


@dataclass(frozen=True)
class TorchEnv:
    version: str  # a release (2.10.1), "nightly", or a path to an existing interpreter
    python: Path
    setup_seconds: float  # 0.0 when it was already there
    source: str = ""  # where its torch came from, in words ("this environment's own torch", an index, pip's config)


def pip_sources(python: str = sys.executable) -> list[str]:
    """This machine's pip configuration (files and PIP_* variables) as uv arguments: uv reads no pip.conf, so a
    machine behind its own mirror or with local wheels would otherwise be bypassed."""
    try:
        out = subprocess.run(
            [python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    flags = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}
    args: list[str] = []
    seen: set[tuple[str, str]] = set()
    for line in out.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name not in flags:
            continue
        for item in value.strip().strip("'\"").split():
            if (name, item) not in seen and not (name == "index-url" and any(a == "--index-url" for a in args)):
                seen.add((name, item))
                args += [flags[name], item]
    return args


def torch_sources(version: str, family: str, index_url: str | None, wheelhouse: Path | None) -> tuple[list[str], str]:
    """The uv arguments that say where torch==version comes from, and that choice in words."""
    if wheelhouse is not None:
        return ["--no-index", "--find-links", str(wheelhouse)], f"the wheelhouse {wheelhouse}"
    if version == "nightly":
        index = index_url or NIGHTLY_INDEX
        return ["--index-url", index], index
    if family != "cpu" and index_url:
        return ["--extra-index-url", index_url], index_url
    if index_url and index_reachable(index_url):  # the CPU build from the CPU target's own index
        return ["--extra-index-url", index_url], index_url
    # pip's own semantics over several sources: the best match among all of them (a local +cpu wheel sorts above
    # the registry's build of the same release), where uv by default takes only the first index that has torch.
    configured = pip_sources()
    configured = [*configured, "--index-strategy", "unsafe-best-match"] if configured else []
    why = f" ({index_url} is not reachable from here)" if index_url else ""
    return configured, ("this machine's pip configuration" if configured else "uv's default index") + why


def own_torch(version: str, python: str = sys.executable) -> str | None:
    """This interpreter's torch version when its release is `version` (a local build suffix ignored), else None."""
    if python != sys.executable:
        return None
    try:
        installed = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    return installed if installed.split("+")[0] == version else None


# What one release's environment took from the registry and on disk where nothing was built before (a CUDA build
# of torch with its libraries, the registry's default: 8 releases took about 14 GB of downloads; a bisect that built
# 4 took about 20 GB of disk, where 3.8 GB each had been said).
DOWNLOAD_PER_ENV, DISK_PER_ENV = 1.8e9, 5.4e9


class NotPublished(InputError):
    """The index here has no build of the release for this Python and platform: no later attempt installs it."""


class BuildFailed(EnvironmentProblem):
    """The release exists but its environment could not be built now (the disk, the network, the index): another
    attempt may succeed, so nothing may stand in for it silently."""


def built(version: str) -> bool:
    """Whether a run of `version` needs no environment built: this interpreter's own release, an interpreter given by
    path, or an environment already complete in the cache."""
    return (
        os.sep in version
        or own_torch(version) is not None
        or (cache_root() / "envs" / f"torch-{version}" / ".complete").exists()
    )


def estimate(envs: int) -> str:
    """What building `envs` more environments costs, in words, measured from the environments in the cache where
    there are any: each one's own files (those no other environment links: what building it added, what removing it
    frees; `reprokit envs`), their median, in GiB; the download is their wheels, compressed, so at most that. Without
    any, the registry's default CUDA build as measured on a machine that had none."""
    done = [row for row in listing() if (cache_root() / "envs" / f"torch-{row.name}" / ".complete").exists()]
    if done:
        own = sorted(row.frees or 0 for row in done)
        per = (own[(len(own) - 1) // 2] + own[len(own) // 2]) / 2
        return (
            f"about {human_size(envs * per)} of disk, {human_size(per)} each: the median of what each of the "
            f"{len(done)} environments here holds of its own; it downloads each release's torch and the libraries "
            f"no environment here has yet, at most that much (wheels are compressed)"
        )
    return (
        f"about {human_size(envs * DOWNLOAD_PER_ENV)} downloaded and {human_size(envs * DISK_PER_ENV)} of disk "
        "(each release's torch from the registry with its CUDA libraries; nothing is built here to measure), less "
        "where the releases share libraries"
    )


def ensure(
    version: str,
    index_url: str | None = None,
    wheelhouse: Path | None = None,
    python_version: str = f"{sys.version_info.major}.{sys.version_info.minor}",
    log=print,
    family: str = "cpu",
) -> TorchEnv:
    """The environment holding torch==version (built on first use); returns its interpreter."""
    if os.sep in version:  # an interpreter given by path: use it as is
        return TorchEnv(version, Path(version), 0.0, "the interpreter given")
    if (mine := own_torch(version)) is not None:
        return TorchEnv(version, Path(sys.executable), 0.0, f"this environment's own torch {mine}")
    folder = cache_root() / "envs" / f"torch-{version}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    # One builder per release at a time: a second process waits and reuses the environment, never deletes it half-built.
    with open(folder.parent / f".torch-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(version, folder, index_url, wheelhouse, python_version, log, family)


def _ensure_locked(
    version: str, folder: Path, index_url: str | None, wheelhouse: Path | None, python_version: str, log, family: str
) -> TorchEnv:
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return TorchEnv(version, python, 0.0, (folder / ".complete").read_text().strip())
    uv, start = uv_binary(), time.monotonic()
    env = {**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv")}
    source, words = torch_sources(version, family, index_url, wheelhouse)
    shutil.rmtree(folder, ignore_errors=True)
    log(f"torch {version}: building {folder} with uv, torch from {words}")
    spec = ["--pre", "torch"] if version == "nightly" else [f"torch=={version}"]
    try:
        _call([uv, "venv", "-q", "--python", python_version, str(folder)], env)
        _call([uv, "pip", "install", "-q", "--python", str(python), *source, *spec, *extras(version)], env)
    except InputError:
        shutil.rmtree(folder, ignore_errors=True)  # a half-built environment holds gigabytes and is never used
        raise
    (folder / ".complete").write_text(f"torch {version} from {words}\n")
    log(
        f"torch {version}: ready in {time.monotonic() - start:.0f} s; the environment cache now holds "
        f"{human_size(cache_size())} ({cache_root()}; `reprokit envs --remove VERSION` or `--clear` frees it)"
    )
    return TorchEnv(version, python, round(time.monotonic() - start, 1), words)


def _call(command: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        unsolvable = "No solution found" in proc.stderr  # uv: no build of that release for this Python here
        words = " ".join([Path(command[0]).name, *command[1:3]])
        raise (NotPublished if unsolvable else BuildFailed)(f"{words} ...: failed ({last.strip()})")
