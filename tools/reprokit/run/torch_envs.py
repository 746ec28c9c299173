"""One Python environment per torch release, built from the registry with uv, for runs of other releases than the
one installed (`reprokit run --torch 2.10.1`, the history, bisection).

Environments live under ~/.cache/reprokit/envs/torch-<version>; uv's one shared cache (~/.cache/reprokit/uv)
stores each wheel once, so the libraries common to several releases are not downloaded or stored twice.

Where torch comes from: an accelerator target's own index; for the CPU target, its CPU index where that is
reachable, else what this machine's pip configuration serves (its index, extra indexes and find-links: a CPU wheel
on local disk is taken before a CUDA build from the registry). A release equal to this environment's own torch is
not built at all: this interpreter runs it. `reprokit envs` lists the environments with their sizes and frees them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from reprokit.images.wheelhouse import index_reachable
from reprokit.model.schema import InputError

NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly/cpu"
# Older releases' inductor imports setuptools; numpy is what the cases use besides torch.
EXTRAS = ("setuptools", "numpy")


def cache_root() -> Path:
    return Path(os.environ.get("REPROKIT_CACHE", Path.home() / ".cache" / "reprokit"))


@dataclass(frozen=True)
class TorchEnv:
    version: str  # a release (2.10.1), "nightly", or a path to an existing interpreter
    python: Path
    setup_seconds: float  # 0.0 when it was already there
    source: str = ""  # where its torch came from, in words ("this environment's own torch", an index, pip's config)


def _uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv  # the PyPI package ships the binary (a dependency of reprokit)

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        raise InputError("--torch needs uv (pip install uv) to build the release's environment") from None


def pip_sources(python: str = sys.executable) -> list[str]:
    """This machine's pip configuration (files and PIP_* variables) as uv arguments: uv reads no pip.conf, so a
    machine behind its own mirror or with local wheels would otherwise be bypassed."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
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


def ensure(version: str, index_url: str | None = None, wheelhouse: Path | None = None,
           python_version: str = f"{sys.version_info.major}.{sys.version_info.minor}", log=print,
           family: str = "cpu") -> TorchEnv:
    """The environment holding torch==version (built on first use); returns its interpreter."""
    if os.sep in version:  # an interpreter given by path: use it as is
        return TorchEnv(version, Path(version), 0.0, "the interpreter given")
    if (mine := own_torch(version)) is not None:
        return TorchEnv(version, Path(sys.executable), 0.0, f"this environment's own torch {mine}")
    folder = cache_root() / "envs" / f"torch-{version}"
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return TorchEnv(version, python, 0.0, (folder / ".complete").read_text().strip())
    uv, start = _uv(), time.monotonic()
    env = {**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv")}
    source, words = torch_sources(version, family, index_url, wheelhouse)
    shutil.rmtree(folder, ignore_errors=True)
    log(f"torch {version}: building {folder} with uv, torch from {words}")
    _call([uv, "venv", "-q", "--python", python_version, str(folder)], env)
    spec = ["--pre", "torch"] if version == "nightly" else [f"torch=={version}"]
    _call([uv, "pip", "install", "-q", "--python", str(python), *source, *spec, *EXTRAS], env)
    (folder / ".complete").write_text(f"torch {version} from {words}\n")
    log(f"torch {version}: ready in {time.monotonic() - start:.0f} s; the environment cache now holds "
        f"{human_size(cache_size())} ({cache_root()}; `reprokit envs --remove VERSION` or `--clear` frees it)")
    return TorchEnv(version, python, round(time.monotonic() - start, 1), words)


def _call(command: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"{' '.join(command[:3])} ...: failed ({last})")


def folder_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def cache_size() -> int:
    return sum(folder_size(cache_root() / part) for part in ("envs", "uv"))


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} GB"


def listing() -> list[tuple[str, int]]:
    """Every built environment (its version) and its size, plus uv's shared wheel cache as "uv cache"."""
    envs = cache_root() / "envs"
    rows = [(p.name.removeprefix("torch-"), folder_size(p)) for p in sorted(envs.glob("torch-*")) if p.is_dir()]
    return rows + [("uv cache", folder_size(cache_root() / "uv"))]


def remove(versions: list[str], everything: bool = False) -> int:
    """Delete the environments of `versions` (all of them, and uv's wheel cache, with everything=True); the bytes
    freed."""
    envs = cache_root() / "envs"
    targets = [p for p in envs.glob("torch-*") if everything or p.name.removeprefix("torch-") in versions]
    if everything:
        targets.append(cache_root() / "uv")
    unknown = [v for v in versions if not (envs / f"torch-{v}").is_dir()]
    if unknown and not everything:
        raise InputError(f"--remove {' '.join(unknown)}: no such environment (`reprokit envs` lists them)")
    freed = 0
    for path in targets:
        freed += folder_size(path)
        shutil.rmtree(path, ignore_errors=True)
    return freed
