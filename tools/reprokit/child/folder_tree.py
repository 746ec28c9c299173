"""Trees a case made (a budgeted host folder's tmpfs, its copy on the host, a run's folder), walked and removed
without recursion and without following a link, relative to folder descriptors: a tree 1,100 folders deep is as
cheap as a wide one, and a link swapped in for a folder is never entered. Standard library only; loaded by path
(contain.py, outbox.py), also inside the sandbox (bubblewrap.py binds it read-only).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_DEPTH = 32  # folders below a budgeted folder's top: an inductor or Triton cache uses fewer than ten

Entry = tuple[list[str], int, str]  # (path parts below the top, descriptor of the folder holding it, kind)


def walk(top_fd: int, max_depth: int = MAX_DEPTH) -> Iterator[Entry]:
    """Every entry below the folder `top_fd`, depth first in name order: (parts, its folder's descriptor, kind), kind
    "folder" (then entered), "deep" (a folder below `max_depth` folders: not entered), "link", "file" or "other".
    At most `max_depth` + 1 descriptors are open at once; a folder that vanished or cannot be opened is skipped."""
    stack: list[tuple[int, list[str], list[str]]] = [(os.dup(top_fd), [], _names(top_fd))]
    try:
        while stack:
            fd, parts, names = stack[-1]
            if not names:
                os.close(fd)
                stack.pop()
                continue
            name = names.pop()
            try:
                mode = os.lstat(name, dir_fd=fd).st_mode
            except OSError:
                continue
            path = [*parts, name]
            if stat.S_ISLNK(mode):
                yield path, fd, "link"
            elif not stat.S_ISDIR(mode):
                yield path, fd, "file" if stat.S_ISREG(mode) else "other"
            elif len(path) > max_depth:
                yield path, fd, "deep"
            else:
                yield path, fd, "folder"
                try:
                    sub = os.open(name, DIRECTORY, dir_fd=fd)
                except OSError:
                    continue
                stack.append((sub, path, _names(sub)))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _names(fd: int) -> list[str]:
    """The folder's entries, last name first (walk() pops them in name order)."""
    try:
        return sorted(os.listdir(fd), reverse=True)
    except OSError:
        return []


def remove_entry(parent_fd: int, name: str) -> None:
    """Remove parent/name, whatever it is: a file, a link (never followed), a folder with everything below it, however
    deep. One descriptor at a time: going up is `..`, checked to be the folder it came from (else OSError)."""
    try:
        os.unlink(name, dir_fd=parent_fd)
        return
    except FileNotFoundError:
        return
    except IsADirectoryError:
        pass
    current = os.open(name, DIRECTORY, dir_fd=parent_fd)
    info = os.fstat(parent_fd)
    above, names = [(info.st_dev, info.st_ino)], [name]
    try:
        while names:
            below = _first_folder_emptying(current)
            if below is not None:
                info = os.fstat(current)
                nested = os.open(below, DIRECTORY, dir_fd=current)
                os.close(current)
                current = nested
                above.append((info.st_dev, info.st_ino))
                names.append(below)
                continue
            up = os.open("..", DIRECTORY, dir_fd=current)
            info = os.fstat(up)
            if (info.st_dev, info.st_ino) != above[-1]:
                os.close(up)
                raise OSError(f"{name}: the tree moved while it was being removed")
            os.close(current)
            current = up
            above.pop()
            os.rmdir(names.pop(), dir_fd=current)
    finally:
        os.close(current)


def _first_folder_emptying(fd: int) -> str | None:
    """Unlink every non-folder entry of the folder; the name of a folder still in it, or None where it is empty."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            try:
                os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
    return None


def remove_tree(path: str) -> None:
    """Remove the folder (or file) at `path` and everything below it, without recursion; nothing where it is gone."""
    parent, name = os.path.split(os.path.abspath(path))
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        remove_entry(parent_fd, name)
    finally:
        os.close(parent_fd)
