"""Files of a case folder or a run folder, read as untrusted: a case (or the process it ran) may have replaced any of
them with a link to a secret, a FIFO that blocks the reader, or a device. Only a regular file directly inside the
folder is read, never through a link, and at most `cap` bytes of it; a folder is listed without following links."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.run.untrusted_files import UntrustedFile, read_untrusted

SCRIPT_CAP = 1 << 20  # a case script or a minified repro: far below this
EXTRA_FILES = ("minified_repro.py",)  # files beside the scripts that a bug report quotes


def _real_folder(folder: Path) -> None:
    try:
        info = os.lstat(folder)
    except OSError as err:
        raise InputError(f"{folder}: cannot be read ({err.strerror})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{folder}: not a folder (a link or another file is not read)")


def problem(folder: Path, name: str) -> str | None:
    """Why folder/name may not be read as one of the case's files (a link, a FIFO, a device), or None when it is a
    regular file directly inside the folder or absent."""
    if "/" in name or name in ("", ".", ".."):
        return f"{folder / name}: not a file name inside {folder}"
    try:
        info = os.lstat(folder / name)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = "a link" if stat.S_ISLNK(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a file"
        return f"{folder / name}: {kind}; only a regular file inside the case folder is read"
    return None


def read_text(folder: Path, name: str, cap: int = SCRIPT_CAP) -> str:
    """The text of folder/name: a regular file inside the folder, at most `cap` bytes; InputError otherwise."""
    _real_folder(folder)
    why = problem(folder, name)
    if why:
        raise InputError(why)
    try:
        data, size = read_untrusted(folder / name, cap)
    except UntrustedFile as err:
        raise InputError(f"{folder}: {err}") from None
    if size > cap:
        raise InputError(f"{folder / name}: {size} bytes, more than the {cap} a bug report quotes")
    return data.decode("utf-8", "replace")


def read_optional(folder: Path, name: str, cap: int = SCRIPT_CAP) -> str | None:
    """read_text, or None when the file is absent."""
    _real_folder(folder)
    if not os.path.lexists(folder / name):
        return None
    return read_text(folder, name, cap)


def regular_files(folder: Path, cap: int) -> tuple[dict[str, bytes], list[str]]:
    """name -> bytes of every regular file directly in `folder` (each at most `cap` bytes; a larger one is cut), and
    what was left out and why (links, FIFOs, sub-folders, devices)."""
    found: dict[str, bytes] = {}
    left: list[str] = []
    try:
        _real_folder(folder)
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (InputError, OSError):
        return found, [f"{folder.name}: not a readable folder"]
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            left.append(f"{entry.name}: not a regular file")
            continue
        try:
            found[entry.name] = read_untrusted(Path(entry.path), cap)[0]
        except UntrustedFile as err:
            left.append(str(err))
    return found, left
