"""The host folders a run writes (a `--cache DIR` folder, a TORCH_TRACE folder), as the runner trusts them.

The runner runs as its user (often root) outside the sandbox, and copy-out writes the case's files there, so a link
or a folder someone else can write is a way to make the runner write (and bind into the sandbox) anything it can
reach. Each cache folder is therefore checked part by part from the cache root (`lstat`: a real folder, no link, the
runner's own, writable by neither its group nor others), made where missing, and every budgeted folder is opened
without following a link (`O_NOFOLLOW | O_DIRECTORY`, part by part from `/`): the keeper binds it into the sandbox
and writes and cleans it through that descriptor, so a link swapped in mid-run is never followed. What fails is
refused in one line saying what to do, before anything runs.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reprokit.model.schema import InputError

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NOBODY = 65534  # the case user of a root runner, which an older reprokit handed cache folders to


def _refusal(path: Path, info: os.stat_result) -> str | None:
    """Why the runner must not write or bind the folder `path` (its lstat `info`), as one line; None: it may."""
    me = os.geteuid()
    if stat.S_ISLNK(info.st_mode):
        return (
            f"--cache: {path} is a link (to {os.readlink(path)}), which the runner never follows: remove the "
            f"link (rm {path}) or give the real folder as --cache DIR"
        )
    if not stat.S_ISDIR(info.st_mode):
        return f"--cache: {path} is not a folder: remove it or give another --cache DIR"
    if info.st_uid == NOBODY and me != NOBODY:
        return (
            f"--cache: {path} is owned by uid {NOBODY} (nobody), as an older reprokit left it, so any process "
            f"of that user could have planted what the next run loads: remove it (rm -rf {path}) and run again"
        )
    if info.st_uid != me:
        return (
            f"--cache: {path} is owned by uid {info.st_uid}, not by this runner (uid {me}), so its owner could "
            f"put a link in it that the runner would write through: give a --cache DIR of your own"
        )
    if info.st_mode & 0o022:
        return (
            f"--cache: {path} is writable by its group or others (mode {stat.S_IMODE(info.st_mode):o}), so "
            f"they could put a link in it: chmod go-w {path}, or give a --cache DIR of your own"
        )
    return None


def _check(path: Path, info: os.stat_result) -> None:
    why = _refusal(path, info)
    if why:
        raise InputError(why)


def cache_folder(root: Path, *names: str) -> Path:
    """root/names..., each part from `root` checked (or made, mode 0755 whatever the umask, through its parent's
    descriptor); refused in one line (InputError) where a part is a link, not a folder, not the runner's or writable
    by others. `root` is the resolved --cache DIR (its parents are the user's choice; it is made where missing)."""
    made = not os.path.lexists(root)
    if not made:
        _check(root, os.lstat(root))
    path, fd = root, -1
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o755)
        fd = os.open(root, FOLDER)
        if made:
            os.fchmod(fd, 0o755)
        _check(root, os.fstat(fd))
        for name in names:
            path = path / name
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
                made = True
            except FileExistsError:
                made = False
            _check(path, os.lstat(name, dir_fd=fd))
            nested = os.open(name, FOLDER, dir_fd=fd)
            os.close(fd)
            fd = nested
            if made:
                os.fchmod(fd, 0o755)
            _check(path, os.fstat(fd))
    except OSError as err:  # swapped between the lstat and the open (ELOOP): refused as the lstat would have
        raise InputError(
            f"--cache: {path} could not be opened as a folder ({err.strerror}): check what stands there and run again"
        ) from None
    finally:
        if fd >= 0:
            os.close(fd)
    return path


def open_folder(path: Path) -> int:
    """A descriptor of the folder `path` (resolved: a link the caller named is the caller's choice), opened part by
    part from `/` without following any link, and the runner's own (a folder swapped in by someone who can write a
    parent is theirs): the keeper binds it and works below it, opening nothing there through a link either, so a
    link swapped in afterwards is never followed. The caller closes it."""
    fd = os.open("/", FOLDER)
    try:
        for name in path.resolve().parts[1:]:
            nested = os.open(name, FOLDER, dir_fd=fd)
            os.close(fd)
            fd = nested
        owner = os.fstat(fd).st_uid
    except OSError as err:
        os.close(fd)
        raise InputError(
            f"{path}: a folder the run writes could not be opened without following a link "
            f"({err.strerror}): check what stands there and run again"
        ) from None
    if owner != os.geteuid():
        os.close(fd)
        raise InputError(
            f"{path}: a folder the run writes is owned by uid {owner}, not by this runner "
            f"(uid {os.geteuid()}): give a folder of your own"
        )
    return fd
