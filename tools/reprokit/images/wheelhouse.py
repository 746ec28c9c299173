"""A wheelhouse: every package a target's image installs, downloaded once (`reprokit wheelhouse`) for builds where no
index is reachable (air-gapped clusters, machines without registry access). Checked before a build (the torch wheel
must be the target's build: a CPU wheel from a local find-links folder is the usual mistake) and served to the build
over the loopback, so the wheels are never copied into the build context or an image layer.
"""

from __future__ import annotations

import functools
import platform
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from reprokit.model.matrix import Target
from reprokit.model.schema import InputError

# pip matches a wheel's platform tag exactly: every glibc a base image may have, up to the oldest base's (Ubuntu
# 22.04, under the CANN images: glibc 2.35); manylinux2014 also brings manylinux2010 and manylinux1.
OLDEST_GLIBC_MINOR = 35


def platforms(machine: str | None = None) -> list[str]:
    arch = machine or platform.machine()
    return [f"manylinux_2_{n}_{arch}" for n in range(17, OLDEST_GLIBC_MINOR + 1)] + [f"manylinux2014_{arch}"]


@functools.lru_cache(maxsize=8)
def index_reachable(url: str, timeout: float = 5.0) -> bool:
    """Whether an index answers at all (through the machine's proxy settings); a target's PyTorch index often does
    not behind a mirror or on an air-gapped box, where pip's own configuration serves."""
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout):
            return True
    except Exception:  # noqa: BLE001 - DNS, TLS, HTTP errors all mean "not usable from here"
        return False


def download_commands(
    torch_packages: list[str], packages: list[str], dest: Path, python: str, torch_index: str | None
) -> list[list[str]]:
    """pip download: torch from its index alone (as the image installs it), then the rest from PyPI, finding the
    torch just downloaded in dest rather than fetching another build of it."""
    common = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--dest",
        str(dest),
        "--only-binary=:all:",
        "--python-version",
        python,
        *(f"--platform={p}" for p in platforms()),
    ]
    first = common + (["--index-url", torch_index] if torch_index else []) + torch_packages
    return [first, common + ["--find-links", str(dest)] + packages]


_WHEEL = re.compile(
    r"^torch-(?P<version>[^-]+?)(?:\+(?P<build>[^-]+))?-(?P<python>cp\d+)-[^-]+-(?P<platform>[^-]+)\.whl$"
)


def torch_builds(folder: Path, version: str) -> list[tuple[str, str]]:
    """(file name, local build label) of every torch wheel of this version in the folder ('' for no label)."""
    found = []
    for wheel in sorted(folder.glob("torch-*.whl")):
        match = _WHEEL.match(wheel.name)
        if match and match["version"] == version:
            found.append((wheel.name, match["build"] or ""))
    return found


def _fits(family: str, build: str, wheel: str) -> bool:
    """Whether a torch build label is the family's: PyPI's unlabelled Linux x86-64 wheels are CUDA builds."""
    x86 = "x86_64" in wheel
    if family == "cuda":
        return build.startswith("cu") or (build == "" and x86)
    if family == "rocm":
        return build.startswith("rocm")
    if family == "cpu":  # +cpu, or PyPI's unlabelled wheel (on x86-64 a CUDA build, which runs on the CPU too)
        return build in ("cpu", "")
    # ascend (torch_npu runs on the CPU build of torch): +cpu, or an unlabelled wheel off x86-64
    return build == "cpu" or (build == "" and not x86)


def check(folder: Path, name: str, target: Target) -> list[str]:
    """The wheels of a wheelhouse for target `name`, after checking that it holds exactly one torch of the pin,
    of the target's build."""
    if not folder.is_dir():
        raise InputError(f"--wheelhouse {folder}: no such folder")
    builds = torch_builds(folder, target.pins.torch)
    if not builds:
        raise InputError(
            f"--wheelhouse {folder}: no torch-{target.pins.torch} wheel (make one with `reprokit "
            f"wheelhouse --target {name} {folder}`)"
        )
    if len(builds) > 1:
        raise InputError(
            f"--wheelhouse {folder}: {len(builds)} torch-{target.pins.torch} builds "
            f"({', '.join(w for w, _ in builds)}); keep the {target.family} one only"
        )
    wheel, build = builds[0]
    if not _fits(target.family, build, wheel):
        raise InputError(
            f"--wheelhouse {folder}: {wheel} is not a {target.family} build of torch (a find-links "
            "folder or index in pip's configuration supplied it, e.g. PIP_FIND_LINKS: download again "
            "without it)"
        )
    return sorted(p.name for p in folder.glob("*.whl"))


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """The folder over HTTP on the loopback while the block runs (a build with host networking installs from it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
