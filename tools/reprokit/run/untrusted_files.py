"""Files a run leaves that the case controls, read as untrusted: bounded, no links or FIFOs followed, and the
probes' reports checked field by field."""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path

from reprokit.model.untrusted_text import recordable, recordable_value

TAIL_BYTES = 6000  # the bytes of each output stream a record keeps


def tail_text(data: bytes, size: int, cap: int = TAIL_BYTES) -> str:
    text = data[-cap:].decode("utf-8", "replace")
    if size > cap:
        text = f"[... {size - cap} earlier bytes truncated ...]\n" + text.split("\n", 1)[-1]
    return recordable(text)


class UntrustedFile(Exception):
    """A file of the run's folders is not what the runner wrote there: a link, a FIFO, a device."""


def read_untrusted(path: Path, cap: int, tail: bool = False) -> tuple[bytes, int]:
    """At most `cap` bytes (the last ones with tail=True) of a regular file the case may have replaced, and its size.

    O_NOFOLLOW: no symlink to elsewhere; O_NONBLOCK + S_ISREG: a FIFO or a device is refused, never read (a FIFO
    blocks the reader until someone opens its other end)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise UntrustedFile(f"{path.name}: cannot be opened ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFile(f"{path.name}: not a regular file")
        if tail and info.st_size > cap:
            os.lseek(fd, info.st_size - cap, os.SEEK_SET)
        chunks, left = [], cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


REPORT_CAP = 256 * 1024  # a probe report is a few KB (the message is cut at 2000 characters)


_REPORT_FIELDS = {
    "exception": (str, type(None)),
    "message": (str, type(None)),
    "stage": (str, type(None)),
    "exit_code": (int,),
    "confined": (int, type(None)),
    "chain": (list,),
    "dynamo": (dict, type(None)),
}


def read_reports(private: Path, key: str) -> tuple[list[dict], str | None]:
    """The probes' reports (one per process: each torchrun rank) and, if one is not what a probe writes, why.

    Only a report carrying this run's key counts: the case cannot write the folder (it is outside its Landlock
    rules), and without Landlock it would have to find the key."""
    reports = []
    for path in sorted(private.glob("probe-*.json")):
        try:
            text = read_untrusted(path, REPORT_CAP)[0]
            if not text:  # opened, never written: the process died or was killed before the script ended
                continue
            data = json.loads(text)
        except UntrustedFile as err:
            return [], str(err)
        except ValueError:
            return [], f"{path.name}: not JSON"
        if not isinstance(data, dict) or not hmac.compare_digest(str(data.pop("key", "")), key):
            return [], f"{path.name}: not written by this run's probe (no key)"
        for name, value in data.items():
            if name not in _REPORT_FIELDS or not isinstance(value, _REPORT_FIELDS[name]) or isinstance(value, bool):
                return [], f"{path.name}: field {name!r} is not what the probe writes"
        reports.append(recordable_value(data))  # the case wrote the message: nothing in it may break a write
    return reports, None
