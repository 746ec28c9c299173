"""The host folders a run may write (a --cache folder, a TORCH_TRACE folder), kept inside the run's budget.

Inside bubblewrap each such folder is a tmpfs of the run's cache budget, seeded from a read-only view of the host
folder (seed()); the case writes there, never on the host. When the case has ended and every process of the sandbox
is killed, the sandbox's first process streams the folder out on a pipe (send()): a start line, then per entry a
JSON header line and, for a regular file within the budget (at most `cap` bytes and `files` entries in all, folders
counted, at most MAX_DEPTH folders deep), its bytes; every other entry (a link, FIFO, device, a file over the budget,
a folder too deep) is named as not copied, with why; then an end line. Trees are walked without recursion
(folder_tree.py): a case's 1,100-level tree never crashes this process, which still reports the case's exit.
The keeper takes it from there (copy_out.py). Standard library only; loaded by path, like contain.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same module, as mypy reads it (loaded by path: inside the sandbox there is no package)
    from reprokit.child import folder_tree
else:
    _path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "folder_tree.py")
    _spec = importlib.util.spec_from_file_location("reprokit_child_folder_tree", _path)
    assert _spec is not None and _spec.loader is not None  # a .py file's location always has a spec and a loader
    folder_tree = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(folder_tree)

CHUNK = 1 << 20
START = b"reprokit-outbox 2\n"
MAX_HEADER = 64 << 10  # a header line: a 4,096-byte path, JSON-escaped (6 characters a byte), fits many times over
LISTED = 100  # entries not copied that are named one by one; the rest are counted
END = {"end": True}
MAX_DEPTH = folder_tree.MAX_DEPTH
DEEP = f"deeper than {MAX_DEPTH} folders"


def seed(pairs: list[list[str]], files: int) -> None:
    """Copy each read-only host folder (seed) into its tmpfs (path): regular files and folders only, at most `files`
    entries (folders count) and MAX_DEPTH folders deep, walked without recursion (an older version's host folder
    may hold any tree)."""
    for source, target in pairs:
        try:
            top = os.open(source, folder_tree.DIRECTORY)
        except OSError:
            continue
        left = files
        made: dict[tuple[str, ...], str] = {(): target}
        try:
            for parts, parent, kind in folder_tree.walk(top):
                if left <= 0:
                    break
                where = made.get(tuple(parts[:-1]))
                if where is None or kind not in ("folder", "file"):
                    continue
                left -= 1
                path = os.path.join(where, parts[-1])
                if kind == "folder":
                    try:
                        os.mkdir(path, 0o700)
                        made[tuple(parts)] = path
                    except OSError:
                        pass  # the budget is full: the case starts with what fitted
                else:
                    _copy_regular(parent, parts[-1], path)
        finally:
            os.close(top)


def _copy_regular(parent: int, name: str, target: str) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        with open(target, "xb") as sink:
            while chunk := os.read(fd, CHUNK):
                sink.write(chunk)
    except OSError:
        pass  # the budget is full: the case starts with what fitted
    finally:
        os.close(fd)


class _Sender:
    """send()'s state: what is left of the budget, and the entries not copied (named up to LISTED, then counted)."""

    def __init__(self, fd: int, cap: int, files: int) -> None:
        self.fd, self.bytes_left, self.files_left = fd, cap, files
        self.listed, self.unlisted, self.cut = 0, 0, False

    def skip(self, index: int, relative: str, why: str, over_budget: bool = False) -> None:
        self.cut = self.cut or over_budget
        if self.listed >= LISTED:
            self.unlisted += 1
            return
        self.listed += 1
        line = (json.dumps({"folder": index, "path": relative, "skipped": why}) + "\n").encode()
        if len(line) <= MAX_HEADER:
            _write_all(self.fd, line)
        else:  # cannot happen for a real path (PATH_MAX); still named, cut
            self.skip(index, relative[:200], f"a header over {MAX_HEADER >> 10} KiB")

    def folder(self, index: int, relative: str) -> bool:
        """A folder counts against the files budget (a file at the bottom of a chain brings the chain along)."""
        if self.files_left <= 0:
            self.skip(index, relative, "over the cache budget's files", True)
            return False
        self.files_left -= 1
        return True

    def file(self, index: int, relative: str, handle: int, size: int) -> None:
        line = (json.dumps({"folder": index, "path": relative, "size": size}) + "\n").encode()
        if len(line) > MAX_HEADER:
            return self.skip(index, relative[:200], f"a header over {MAX_HEADER >> 10} KiB")
        if self.files_left <= 0:
            return self.skip(index, relative, "over the cache budget's files", True)
        if size > self.bytes_left:
            return self.skip(index, relative, "over the cache budget's bytes", True)
        _write_all(self.fd, line)
        sent = 0
        while sent < size:
            try:
                done = os.sendfile(self.fd, handle, sent, min(CHUNK, size - sent))
            except OSError:
                done = 0
            if not done:
                break
            sent += done
        _write_all(self.fd, b"\0" * (size - sent))  # it shrank meanwhile: the size stays the header's
        self.bytes_left -= size
        self.files_left -= 1


def send(folders: list[str], fd: int, cap: int, files: int = 1 << 62) -> bool:
    """Stream each folder to fd (the module's format): at most `cap` bytes of file data and `files` entries (files
    and folders) in all, MAX_DEPTH folders deep; walked without recursion, never following a link. Returns whether
    anything was left out for the budget."""
    sender = _Sender(fd, cap, files)
    _write_all(fd, START)
    for index, folder in enumerate(folders):
        try:
            top = os.open(folder, folder_tree.DIRECTORY)
        except OSError:
            continue
        try:  # once the files budget is spent, every later entry is named or counted as not copied
            for parts, parent, kind in folder_tree.walk(top):
                relative = "/".join(parts)
                if kind == "folder":
                    sender.folder(index, relative)
                elif kind == "deep":
                    sender.skip(index, relative, DEEP, True)
                elif kind == "link":
                    sender.skip(index, relative, "a link")
                elif kind == "other":
                    sender.skip(index, relative, "not a regular file")
                else:
                    _send_file(sender, index, relative, parent, parts[-1])
        finally:
            os.close(top)
    if sender.unlisted:
        _write_all(fd, (json.dumps({"more_skipped": sender.unlisted}) + "\n").encode())
    _write_all(fd, (json.dumps(END) + "\n").encode())
    return sender.cut


def _send_file(sender: _Sender, index: int, relative: str, parent: int, name: str) -> None:
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    except OSError as err:
        sender.skip(index, relative, err.strerror or "unreadable")
        return
    try:
        info = os.fstat(handle)
        if stat.S_ISREG(info.st_mode):
            sender.file(index, relative, handle, info.st_size)
        else:
            sender.skip(index, relative, "not a regular file")
    finally:
        os.close(handle)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
