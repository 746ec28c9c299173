"""`reprokit wheelhouse`: download every package a target's image installs into one folder, for `--wheelhouse`
builds on machines that reach no index. torch comes from the target's index where that answers from here, else from
pip's own configuration (a mirror), said in one line; the folder is checked (the torch wheel the target's build) once
the downloads are done."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reprokit.images import dockerfiles, wheelhouse
from reprokit.model.matrix import Target


def download(dest: Path, name: str, target: Target, base_python: str | None, torch_index: str | None, log=print) -> int:
    """Run pip download for each group of packages (each command logged before it runs); the exit status of the
    first that fails, else 0 after the check and the line that says how to build with the folder."""
    python = dockerfiles.python_of(target, base_python)
    index = torch_index or target.pins.index_url
    if not torch_index and index and not wheelhouse.index_reachable(index):
        log(f"{index} is not reachable from here: torch comes from this machine's pip configuration")
        index = None
    for command in wheelhouse.download_commands(
        dockerfiles.torch_packages(target), dockerfiles.packages(target), dest, python, index
    ):
        log(" ".join(command))
        code = subprocess.run(command, check=False).returncode
        if code:
            return code
    wheelhouse.check(dest, name, target)
    log(
        f"{dest}: the wheels of {name}'s image (torch {target.pins.torch}, Python {python}); "
        f"build with --wheelhouse {dest}" + (f" --base-python {python}" if base_python else "")
    )
    return 0
