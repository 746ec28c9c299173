"""The keeper's side of copy-out (outbox.py is the sandbox's): the stream of the budgeted host folders is spooled
into the keeper's private folder as the pipe becomes readable (Spool), and once the sandbox has ended its files are
written into the host folders (receive()), each a fresh file of the runner's (mode 0644, folders 0755, a short
temporary name beside it, then renamed over), and what the run did not leave is removed: the host folder is then
what the run left, within the budget. Each file is copied or recorded as not copied; no file name and no error of
the host disk stops the others or the keeper. Standard library only; loaded by path, like contain.py.
"""

import importlib.util
import json
import os
import select
import stat
import tempfile
import time

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "outbox.py")
_spec = importlib.util.spec_from_file_location("reprokit_child_outbox", _path)
assert _spec is not None and _spec.loader is not None  # a .py file's location always has a spec and a loader
outbox = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outbox)
CHUNK, LISTED, MAX_HEADER, START = outbox.CHUNK, outbox.LISTED, outbox.MAX_HEADER, outbox.START


class Spool:
    """What the sandbox streams out of its budgeted folders (outbox.py), spooled into the keeper's private folder as
    the pipe becomes readable (the sandbox never waits on the keeper's clock), then written into the host folders
    once the sandbox has ended. Its first bytes mean the case has ended: the keeper writes the time into "case-ended"
    (the runner's clock for the case stops there; copy-out is timed apart), and what was copied into "copy-out.json"."""

    def __init__(self, config, read_end, write_end):
        self.fd, self.files = read_end, config.get("cache_files") or 1 << 62
        self.cap = config.get("cache_budget") or 0
        self.spool_cap = self.cap + (outbox.LISTED + 2) * outbox.MAX_HEADER + min(self.files, 1 << 20) * 4096
        self.folders, self.size, self.file, self.ended_at = config.get("budgeted", ()), 0, None, None
        if read_end is None:
            return
        os.close(write_end)
        os.set_blocking(read_end, False)
        try:
            import fcntl

            fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, 1 << 20)  # fewer wake-ups; the default 64 KiB still works
        except (OSError, AttributeError):
            pass
        self.private = os.path.dirname(config["held"])
        self.path = os.path.join(self.private, "outbox")
        self.file = open(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 0o600), "w+b", buffering=0)

    def drain(self, wait=0.0):
        """Spool what the pipe holds, waiting up to `wait` seconds for more; False once the pipe is closed."""
        deadline = time.monotonic() + wait
        while self.file is not None:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    return True
                select.select([self.fd], [], [], left)
                continue
            if not chunk:
                return False
            if self.ended_at is None:
                self.ended_at = time.monotonic()
                self._write_private("case-ended", repr(self.ended_at))
            if self.size < self.spool_cap:
                self._spool(chunk[: self.spool_cap - self.size])
            self.size += len(chunk)
        return False

    def _spool(self, data):
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.file.fileno(), view):]
        except OSError:  # the host disk is full (or a file limit): the spool stops there, the sandbox still drains
            self.spool_cap = self.size + len(data) - len(view)

    def deliver(self, ended_well):
        """Write the spooled files into the host folders (where the sandbox started) and say what was copied; never
        raises: whatever the host disk or a file name does, the keeper goes on to its end."""
        if self.file is None:
            return
        try:
            while self.drain(1.0):
                pass
            if ended_well:
                done = receive(self.path, self.folders, self.cap, self.files).as_json()
                done["seconds"] = round(time.monotonic() - (self.ended_at or time.monotonic()), 3)
                done["spooled_past_cap"] = self.size > self.spool_cap
                self._write_private("copy-out.json", json.dumps(done))
        except Exception as err:  # noqa: BLE001 - the keeper must reach its end (kills, budgets, facts)
            self._write_private("copy-out.json", json.dumps({"failed": f"{type(err).__name__}: {err}"[:300]}))
        finally:
            self.file.close()
            os.close(self.fd)

    def _write_private(self, name, text):
        try:
            fd = os.open(os.path.join(self.private, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            os.write(fd, text.encode())
            os.close(fd)
        except OSError:
            pass


class Received:
    """What receive() did: files written, their bytes, entries not copied (path, why) and how many more were not."""

    def __init__(self):
        self.files, self.bytes, self.not_copied, self.more_not_copied, self.ended = 0, 0, [], 0, False

    def refuse(self, path, why):
        if len(self.not_copied) < LISTED:
            self.not_copied.append([path, why])
        else:
            self.more_not_copied += 1

    def as_json(self):
        return {"files": self.files, "bytes": self.bytes, "not_copied": self.not_copied,
                "more_not_copied": self.more_not_copied, "ended": self.ended}


def receive(spool, folders, cap, files=1 << 62):
    """Write the files of the spool file (send()'s format) into the host folders, then remove from them what the run
    did not leave; each path checked (relative, no `..`), each file fresh (a short temporary name beside it, then
    renamed over), the runner's own. A Received."""
    done, kept = Received(), [set() for _ in folders]
    with open(spool, "rb") as fh:
        if fh.readline(len(START)) != START:
            return done  # the sandbox never reached its copy-out: the host folders stay as they were
        while True:
            line = fh.readline(MAX_HEADER + 1)
            if not line.endswith(b"\n"):
                done.refuse("", "the stream ended early" if len(line) <= MAX_HEADER else "a header over 64 KiB")
                break
            header = _header(line, len(folders))
            if header is None:
                done.refuse("", "a malformed header: the stream stops there")
                break
            if header.get("end"):
                done.ended = True
                break
            if "more_skipped" in header:
                done.more_not_copied += int(header["more_skipped"])
                continue
            index, relative = header["folder"], header["path"]
            if "skipped" in header:
                done.refuse(relative, str(header["skipped"]))
                continue
            size, start = header["size"], fh.tell()
            fh.seek(start + size)
            if size > cap - done.bytes or done.files >= files:
                done.refuse(relative, "over the cache budget")
                continue
            try:
                if _write_file(fh.fileno(), start, size, folders[index], relative.split("/")):
                    kept[index].add(relative)
                    done.files += 1
                    done.bytes += size
                else:
                    done.refuse(relative, "the stream ended early")
            except (OSError, ValueError) as err:  # a name too long, a full disk: this file, never the others
                done.refuse(relative, getattr(err, "strerror", None) or str(err))
    for folder, names in zip(folders, kept, strict=True):
        _remove_the_rest(folder, names)
    return done


def _header(line, folders):
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
    if not isinstance(relative, str) or header.get("folder") not in range(folders) or isinstance(header["folder"], bool):
        return None
    if relative.startswith("/") or any(p in ("", ".", "..") for p in relative.split("/")) or "\0" in relative:
        return None
    if "skipped" in header:
        return header
    size = header.get("size")
    return header if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


def _write_file(spool_fd, start, size, folder, parts):
    """The file folder/parts... from the spool's bytes at `start`; False where the spool holds fewer than `size`."""
    parent = _fresh_parents(folder, parts[:-1])
    fd, temporary = tempfile.mkstemp(prefix=".rk", dir=parent)  # short: the file's own name may be 255 bytes
    try:
        copied = 0
        while copied < size:
            try:
                done = os.copy_file_range(spool_fd, fd, size - copied, start + copied)
            except OSError as err:
                if err.errno not in (18, 22, 38, 95):  # EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: copy by hand
                    raise
                done = len(chunk := os.pread(spool_fd, min(CHUNK, size - copied), start + copied))
                os.write(fd, chunk)
            if not done:
                return False
            copied += done
        os.fchmod(fd, 0o644)
        target = os.path.join(parent, parts[-1])
        if os.path.isdir(target) and not os.path.islink(target):  # the run made a file where a folder was
            import shutil

            shutil.rmtree(target)
        os.replace(temporary, target)
        temporary = None
        return True
    finally:
        os.close(fd)
        if temporary is not None:
            os.unlink(temporary)


def _fresh_parents(folder, parts):
    """folder/parts... as real folders (mode 0755): whatever else stands on the way (a file, a link the run no
    longer has) is removed, as the run left a folder there."""
    current = folder
    for part in parts:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            continue
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(current)
            os.mkdir(current, 0o755)
    return current


def _remove_the_rest(folder, kept):
    """Remove from the host folder every entry that is not a file the run left (`kept`, relative paths), folders
    left empty included; through descriptors, never following a link."""
    for top, dirs, names, top_fd in os.fwalk(folder, topdown=False, follow_symlinks=False):
        relative_top = os.path.relpath(top, folder)
        for name in names:
            relative = name if relative_top == "." else f"{relative_top}/{name}"
            if relative not in kept:
                try:
                    os.unlink(name, dir_fd=top_fd)
                except OSError:
                    pass
        for name in dirs:
            try:
                if stat.S_ISLNK(os.lstat(name, dir_fd=top_fd).st_mode):
                    os.unlink(name, dir_fd=top_fd)
                else:
                    os.rmdir(name, dir_fd=top_fd)  # only an empty one: a folder holding a kept file stays
            except OSError:
                pass
