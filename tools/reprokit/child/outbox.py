"""The host folders a run may write (a --cache folder, a TORCH_TRACE folder), kept inside the run's budget.

Inside bubblewrap each such folder is a tmpfs of the run's cache budget, seeded from a read-only view of the host
folder (seed()); the case writes there, never on the host. When the case has ended and every process of the sandbox
is killed, the sandbox's first process streams the folder out on a pipe (send()): a start line, then per entry a
JSON header line and, for a regular file within the budget (at most `cap` bytes and `files` files in all), its bytes;
every other entry (a link, FIFO, device, a file over the budget) is named as not copied, with why; then an end line.
The keeper takes it from there (copy_out.py). Standard library only; loaded by path, like contain.py.
"""

import json
import os
import stat

CHUNK = 1 << 20
START = b"reprokit-outbox 2\n"
MAX_HEADER = 64 << 10  # a header line: a 4,096-byte path, JSON-escaped (6 characters a byte), fits many times over
LISTED = 100  # entries not copied that are named one by one; the rest are counted
END = {"end": True}


def seed(pairs):
    """Copy each read-only host folder (seed) into its tmpfs (path): regular files and folders only."""
    for source, target in pairs:
        for top, _dirs, names in os.walk(source, followlinks=False):
            where = os.path.join(target, os.path.relpath(top, source))
            os.makedirs(where, mode=0o700, exist_ok=True)
            for name in names:
                _copy_regular(os.path.join(top, name), os.path.join(where, name))


def _copy_regular(source, target):
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
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

    def __init__(self, fd, cap, files):
        self.fd, self.bytes_left, self.files_left = fd, cap, files
        self.listed, self.unlisted, self.cut = 0, 0, False

    def skip(self, index, relative, why, over_budget=False):
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

    def file(self, index, relative, handle, size):
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


def send(folders, fd, cap, files=1 << 62):
    """Stream each folder to fd (the module's format): at most `cap` bytes of file data and `files` files in all.
    Returns whether anything was left out for the budget."""
    sender = _Sender(fd, cap, files)
    _write_all(fd, START)
    for index, folder in enumerate(folders):
        for top, dirs, names in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in [d for d in dirs if os.path.islink(os.path.join(top, d))]:  # never followed: named
                dirs.remove(name)
                names.append(name)
            for name in sorted(names):
                path = os.path.join(top, name)
                relative = os.path.relpath(path, folder)
                try:
                    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                except OSError as err:
                    sender.skip(index, relative, "a link" if os.path.islink(path) else err.strerror or "unreadable")
                    continue
                try:
                    info = os.fstat(handle)
                    if stat.S_ISREG(info.st_mode):
                        sender.file(index, relative, handle, info.st_size)
                    else:
                        sender.skip(index, relative, "not a regular file")
                finally:
                    os.close(handle)
    if sender.unlisted:
        _write_all(fd, (json.dumps({"more_skipped": sender.unlisted}) + "\n").encode())
    _write_all(fd, (json.dumps(END) + "\n").encode())
    return sender.cut


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
