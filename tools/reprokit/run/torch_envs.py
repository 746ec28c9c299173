"""One Python environment per torch release, built from the registry with uv, for runs of other releases than the
one installed (`reprokit run --torch 2.10.1`, the history, bisection).

Environments live under ~/.cache/reprokit/envs/torch-<version>; uv's one shared cache (~/.cache/reprokit/uv)
stores each wheel once, so the CUDA libraries common to several releases are not downloaded or stored twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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


def _uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv  # the PyPI package ships the binary

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        raise InputError("--torch needs uv (pip install uv) to build the release's environment") from None


def ensure(version: str, index_url: str | None = None, wheelhouse: Path | None = None,
           python_version: str = f"{sys.version_info.major}.{sys.version_info.minor}", log=print) -> TorchEnv:
    """The environment holding torch==version (built on first use); returns its interpreter."""
    if os.sep in version:  # an interpreter given by path: use it as is
        return TorchEnv(version, Path(version), 0.0)
    folder = cache_root() / "envs" / f"torch-{version}"
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return TorchEnv(version, python, 0.0)
    uv, start = _uv(), time.monotonic()
    env = {**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv")}
    shutil.rmtree(folder, ignore_errors=True)
    log(f"torch {version}: building {folder} with uv")
    _call([uv, "venv", "-q", "--python", python_version, str(folder)], env)
    spec = ["--pre", "torch"] if version == "nightly" else [f"torch=={version}"]
    source = (["--index-url", index_url or NIGHTLY_INDEX] if version == "nightly" else
              ["--extra-index-url", index_url] if index_url else [])
    if wheelhouse is not None:
        source = ["--no-index", "--find-links", str(wheelhouse)]
    _call([uv, "pip", "install", "-q", "--python", str(python), *source, *spec, *EXTRAS], env)
    (folder / ".complete").write_text(version + "\n")
    return TorchEnv(version, python, round(time.monotonic() - start, 1))


def _call(command: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"{' '.join(command[:3])} ...: failed ({last})")
