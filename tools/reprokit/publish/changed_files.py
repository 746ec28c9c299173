"""A page is written only when its bytes change: a run of one case leaves every page it does not change untouched
(its modification time, `git status`), and the run's "wrote" lines name exactly what changed."""

from __future__ import annotations

from pathlib import Path


def write_changed(path: Path, data: str | bytes) -> bool:
    """Write `data` (text as UTF-8) to `path` unless the file already holds exactly it; whether it was written."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.read_bytes() == raw:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return True
