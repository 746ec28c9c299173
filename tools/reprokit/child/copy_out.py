"""The keeper's side of copy-out (outbox.py is the sandbox's): once the sandbox has ended, the files of the stream the
keeper spooled (spool.py) are written into the host folders (receive()) through descriptors the runner opened without following a link: what the
run did not leave is removed first (leftovers, links, trees of any depth, without recursion), then each file is
written fresh, the runner's (mode 0644, folders 0755, a short temporary name beside it, then renamed over). The host
folder is then what the run left, within the budget, even where copy-out is cut off at its time limit. Each file is
copied or recorded as not copied; no file name and no error of the host disk stops the others. Standard library only;
loaded by path, like contain.py.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import stat
import time
from types import ModuleType
from typing import TYPE_CHECKING, BinaryIO


def _sibling(name: str) -> ModuleType:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    assert spec is not None and spec.loader is not None  # a .py file's location always has a spec and a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:  # the same modules, as mypy reads them (loaded by path, the keeper has no package)
    from reprokit.child import folder_tree, outbox
else:
    outbox = _sibling("outbox")
    folder_tree = outbox.folder_tree
CHUNK, LISTED, MAX_HEADER, START = outbox.CHUNK, outbox.LISTED, outbox.MAX_HEADER, outbox.START
MAX_DEPTH, DEEP = outbox.MAX_DEPTH, outbox.DEEP


class Received:
    """What receive() did: files written, their bytes, entries not copied (path, why) and how many more were not;
    whether the stream's end was read, whether the keeper's own count left something out for the budget, and whether
    it stopped at its deadline."""

    def __init__(self) -> None:
        self.files, self.bytes, self.more_not_copied = 0, 0, 0
        self.not_copied: list[list[str]] = []
        self.ended = self.over_budget = self.cut_off = self.left_over = False

    def refuse(self, path: str, why: str) -> None:
        if len(self.not_copied) < LISTED:
            self.not_copied.append([path, why])
        else:
            self.more_not_copied += 1

    def as_json(self) -> dict[str, object]:
        return {
            "files": self.files,
            "bytes": self.bytes,
            "not_copied": self.not_copied,
            "more_not_copied": self.more_not_copied,
            "ended": self.ended,
            "over_budget": self.over_budget,
            "cut_off": self.cut_off,
            "left_over": self.left_over,
        }


Planned = tuple[int, list[str], int, int]  # (folder index, path parts, offset in the spool, size)


def receive(spool: str, folders: list[int], cap: int, files: int = 1 << 62, deadline: float = float("inf")) -> Received:
    """Write the files of the spool file (send()'s format) into the host folders (descriptors opened without
    following a link), each path checked (relative, no `..`, at most MAX_DEPTH folders deep), its folders counted
    against `files`. What the run did not leave is removed first, so that a copy-out cut off at `deadline` (monotonic)
    leaves each folder within the budget; then each file is written fresh (a short temporary name beside it, then
    renamed over), the runner's own, through descriptors. A Received."""
    done = Received()
    with open(spool, "rb") as fh:
        if fh.readline(len(START)) != START:
            return done  # the sandbox never reached its copy-out: the host folders stay as they were
        plan = _plan(fh, len(folders), cap, files, done)
        for index, top in enumerate(folders):  # not bound by the deadline: the runner's own limit is the backstop
            _remove_the_rest(top, {tuple(parts): size for i, parts, _, size in plan if i == index}, done)
        _write_all(fh.fileno(), plan, folders, done, deadline)
    return done


def _plan(fh: BinaryIO, folders: int, cap: int, files: int, done: Received) -> list[Planned]:
    """The files the stream holds that fit the budget (bytes, entries with their folders, depth), read from the
    headers only; the others recorded as not copied."""
    plan: list[Planned] = []
    made: set[tuple[int, tuple[str, ...]]] = set()
    size_sum = 0
    while True:
        line = fh.readline(MAX_HEADER + 1)
        if not line.endswith(b"\n"):
            done.refuse("", "the stream ended early" if len(line) <= MAX_HEADER else "a header over 64 KiB")
            return plan
        header = _header(line, folders)
        if header is None:
            done.refuse("", "a malformed header: the stream stops there")
            return plan
        if header.get("end"):
            done.ended = True
            return plan
        if "more_skipped" in header:
            done.more_not_copied += int(header["more_skipped"])
            continue
        index, relative = header["folder"], header["path"]
        if "skipped" in header:
            done.refuse(relative, str(header["skipped"]))
            continue
        size, start = header["size"], fh.tell()
        fh.seek(start + size)
        parts = relative.split("/")
        chain = {(index, tuple(parts[:n])) for n in range(1, len(parts))} - made
        if len(parts) - 1 > MAX_DEPTH:
            done.refuse(relative, DEEP)
        elif size > cap - size_sum or len(plan) + len(made) + len(chain) >= files:
            done.refuse(relative, "over the cache budget")
        else:
            plan.append((index, parts, start, size))
            made |= chain
            size_sum += size
            continue
        done.over_budget = True


def _remove_the_rest(top: int, wanted: dict[tuple[str, ...], int], done: Received) -> None:
    """Remove from the host folder every entry that is not a file of `wanted` (parts -> size) of the same size, nor a
    folder on the way to one: links, leftovers of earlier runs, trees of any depth, through descriptors and without
    recursion. What could not be removed is named, and marks the copy-out as failed (`left_over`)."""
    on_the_way = {parts[:n] for parts in wanted for n in range(1, len(parts))}
    for parts, parent, kind in folder_tree.walk(top):
        key = tuple(parts)
        if kind == "folder" and key in on_the_way:
            continue  # walk() enters it next
        if kind == "file" and key in wanted:
            try:
                if os.lstat(parts[-1], dir_fd=parent).st_size == wanted[key]:
                    continue  # replaced below; until then no bigger than the new one
            except OSError:
                continue
        try:
            folder_tree.remove_entry(parent, parts[-1])  # walk() then finds a removed folder gone and goes on
        except OSError as err:
            done.left_over = True
            done.refuse("/".join(parts), f"left from before, not removed: {err.strerror or err}")


def _write_all(spool_fd: int, plan: list[Planned], folders: list[int], done: Received, deadline: float) -> None:
    """Write the planned files, keeping the descriptors of the folders above the current file open (the stream comes
    folder by folder), never more than MAX_DEPTH of them."""
    chain: list[tuple[str, int]] = []
    index_open = -1
    try:
        for index, parts, start, size in plan:
            if time.monotonic() > deadline:
                done.cut_off = True
                return
            relative = "/".join(parts)
            if index != index_open:
                _close(chain, 0)
                index_open = index
            try:
                kept = 0
                while kept < len(chain) and kept < len(parts) - 1 and chain[kept][0] == parts[kept]:
                    kept += 1
                _close(chain, kept)
                for name in parts[len(chain) : -1]:
                    chain.append((name, _fresh_folder(chain[-1][1] if chain else folders[index], name)))
                if _write_file(spool_fd, start, size, chain[-1][1] if chain else folders[index], parts[-1]):
                    done.files += 1
                    done.bytes += size
                else:
                    done.refuse(relative, "the stream ended early")
            except (OSError, ValueError) as err:  # a name too long, a full disk: this file, never the others
                done.refuse(relative, getattr(err, "strerror", None) or str(err))
    finally:
        _close(chain, 0)


def _close(chain: list[tuple[str, int]], keep: int) -> None:
    for _, fd in chain[keep:]:
        os.close(fd)
    del chain[keep:]


def _fresh_folder(parent: int, name: str) -> int:
    """parent/name as a real folder of the runner's (mode 0755), opened without following a link: whatever else stands
    there (a file, a link) is removed, as the run left a folder there."""
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
        made = True
    except FileExistsError:
        made = False
    try:
        fd = os.open(name, folder_tree.DIRECTORY, dir_fd=parent)
    except OSError as err:
        if made or err.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        folder_tree.remove_entry(parent, name)
        os.mkdir(name, 0o755, dir_fd=parent)
        made, fd = True, os.open(name, folder_tree.DIRECTORY, dir_fd=parent)
    if made:
        os.fchmod(fd, 0o755)  # whatever the runner's umask: the next run's check wants no group or other write
    return fd


def _header(line: bytes, folders: int) -> dict | None:
    """A header as the keeper trusts it, or None: a known folder, a relative path without `.`/`..`, a size >= 0."""
    try:
        header = json.loads(line)
    except ValueError:
        return None
    if not isinstance(header, dict):
        return None
    if header.get("end") is True or isinstance(header.get("more_skipped"), int):
        return header
    relative = header.get("path")
    if (
        not isinstance(relative, str)
        or header.get("folder") not in range(folders)
        or isinstance(header["folder"], bool)
    ):
        return None
    if relative.startswith("/") or any(p in ("", ".", "..") for p in relative.split("/")) or "\0" in relative:
        return None
    if "skipped" in header:
        return header
    size = header.get("size")
    return header if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


def _write_file(spool_fd: int, start: int, size: int, parent: int, name: str) -> bool:
    """parent/name from the spool's bytes at `start`; False where the spool holds fewer than `size`."""
    temporary = ".rk" + os.urandom(6).hex()  # short: the file's own name may be 255 bytes
    written = False
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
    try:
        copied = 0
        while copied < size:
            try:
                done = os.copy_file_range(spool_fd, fd, size - copied, start + copied)
            except OSError as err:
                if err.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                    raise
                done = len(chunk := os.pread(spool_fd, min(CHUNK, size - copied), start + copied))
                os.write(fd, chunk)
            if not done:
                return False
            copied += done
        os.fchmod(fd, 0o644)
        try:
            if stat.S_ISDIR(os.lstat(name, dir_fd=parent).st_mode):  # the run made a file where a folder was
                folder_tree.remove_entry(parent, name)
        except FileNotFoundError:
            pass
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        written = True
        return True
    finally:
        os.close(fd)
        if not written:
            os.unlink(temporary, dir_fd=parent)
