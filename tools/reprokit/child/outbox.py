"""The host folders a run may write (a --cache folder, a TORCH_TRACE folder), kept inside the run's budget.

Inside bubblewrap each such folder is a tmpfs of the run's cache budget, seeded from a read-only view of the host
folder (seed()); the case writes there, never on the host. When the case has ended and every process of the sandbox
is killed, the sandbox's first process streams the folder's regular files out on a pipe (send()): no link, FIFO,
device or empty folder, at most CAP bytes in all; the keeper, outside, writes them into the host folder (receive()),
each a fresh file of the runner's (mode 0644, folders 0755), replacing what was there. Standard library only; loaded
by path, like contain.py.
"""

import json
import os
import stat

CHUNK = 1 << 20


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


def send(folders, fd, cap):
    """Stream the regular files of each folder to fd: a JSON header line per file, then its bytes; at most `cap`
    bytes of file data in all. Returns whether anything was left out for the cap."""
    left = cap
    cut = False
    for index, folder in enumerate(folders):
        for top, dirs, names in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(top, name)
                try:
                    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    info = os.fstat(handle)
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    if info.st_size > left:
                        cut = True
                        continue
                    header = {"folder": index, "path": os.path.relpath(path, folder), "size": info.st_size}
                    _write_all(fd, (json.dumps(header) + "\n").encode())
                    sent = 0
                    while sent < info.st_size and (chunk := os.read(handle, min(CHUNK, info.st_size - sent))):
                        _write_all(fd, chunk)
                        sent += len(chunk)
                    _write_all(fd, b"\0" * (info.st_size - sent))  # it shrank meanwhile: the size stays the header's
                    left -= info.st_size
                finally:
                    os.close(handle)
    return cut


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def receive(spool, folders, cap):
    """Write the files streamed into the spool file (send()'s format) into the host folders; each path checked
    (relative, no `..`), each file fresh (written beside it, then renamed over), the runner's own. The count."""
    written = 0
    with open(spool, "rb") as fh:
        while True:
            line = fh.readline(4096)
            if not line.endswith(b"\n"):
                return written
            try:
                header = json.loads(line)
                folder, relative, size = folders[header["folder"]], header["path"], int(header["size"])
            except (ValueError, KeyError, IndexError, TypeError):
                return written
            parts = relative.split("/")
            if size < 0 or size > cap or os.path.isabs(relative) or any(p in ("", ".", "..") for p in parts):
                return written
            target = os.path.join(folder, *parts)
            if not _fresh_parents(folder, parts[:-1]):
                fh.seek(size, os.SEEK_CUR)
                continue
            temporary = f"{target}.reprokit-{os.getpid()}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with open(os.open(temporary, flags, 0o644), "wb") as sink:
                left = size
                while left and (chunk := fh.read(min(CHUNK, left))):
                    sink.write(chunk)
                    left -= len(chunk)
            os.chmod(temporary, 0o644)
            if os.path.islink(target) or (os.path.exists(target) and not os.path.isfile(target)):
                os.unlink(temporary)
                continue
            os.replace(temporary, target)
            written += 1


def _fresh_parents(folder, parts):
    """Make folder/parts... (mode 0755) where missing; False where one exists as anything but a real folder."""
    current = folder
    for part in parts:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            continue
        if not stat.S_ISDIR(info.st_mode):
            return False
    return True
