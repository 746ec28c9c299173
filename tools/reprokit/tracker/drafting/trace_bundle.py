"""The TORCH_TRACE logs of a contained run, zipped for the issue, and tlparse's report of them.

The trace folder was writable by the case: every entry is read as untrusted (regular files directly in it, no
links, no FIFOs, bounded), streamed (never whole in memory) into a copy in a folder the case never saw, capped in
all (TOTAL_CAP, uncompressed, so the compressed zip is smaller still), and tlparse reads that copy."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
import zipfile
from pathlib import Path

from reprokit.tracker.text.bug_text import code_span

TRACE_CAP = 64 << 20  # per log file: a trace of a small repro is a few MB
TOTAL_CAP = 24 << 20  # all logs together, uncompressed, so each zip stays below an issue attachment's 25 MB
CHUNK = 1 << 20  # what is held in memory at once: files are streamed, never read whole
INSTALL_TLPARSE = "pip install 'reprokit[upstream]'  (or: pip install tlparse)"


def _copy_logs(trace_dir: Path, copy: Path) -> tuple[list[str], list[str]]:
    """Each regular file directly in trace_dir streamed into copy/ (never a link, a FIFO, a device or a folder),
    at most TRACE_CAP bytes each and TOTAL_CAP in all; the names copied and what was cut or left out, and why."""
    names: list[str] = []
    left: list[str] = []
    total = 0
    try:
        if trace_dir.is_symlink() or not trace_dir.is_dir():
            return [], [f"{trace_dir.name}: not a readable folder"]
        entries = sorted(os.scandir(trace_dir), key=lambda e: e.name)
    except OSError:
        return [], [f"{trace_dir.name}: not a readable folder"]
    for entry in entries:
        if not entry.is_file(follow_symlinks=False) or entry.name.startswith("."):
            left.append(f"{entry.name}: not a regular file")
            continue
        if total >= TOTAL_CAP:
            left.append(f"{entry.name}: over the bundle's {TOTAL_CAP >> 20} MiB")
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as err:
            left.append(f"{entry.name}: cannot be opened ({err.strerror})")
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                left.append(f"{entry.name}: not a regular file")
                continue
            room = min(TRACE_CAP, TOTAL_CAP - total)
            with open(copy / entry.name, "xb") as sink:
                while room > 0 and (chunk := os.read(fd, min(CHUNK, room))):
                    sink.write(chunk)
                    room -= len(chunk)
                    total += len(chunk)
            if os.read(fd, 1):
                left.append(f"{entry.name}: cut at {(copy / entry.name).stat().st_size} bytes")
            names.append(entry.name)
        finally:
            os.close(fd)
    return names, left


def _zip(folder: Path, path: Path) -> Path:
    """Every regular file under folder (links not followed), streamed in; at most TOTAL_CAP bytes uncompressed."""
    total = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for top, dirs, names in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(names):
                source = Path(top) / name
                if source.is_symlink() or not source.is_file() or total >= TOTAL_CAP:
                    continue
                with open(source, "rb") as fh, zf.open(str(source.relative_to(folder)), "w", force_zip64=True) as sink:
                    while total < TOTAL_CAP and (chunk := fh.read(min(CHUNK, TOTAL_CAP - total))):
                        sink.write(chunk)
                        total += len(chunk)
    return path


def bundle(trace_dir: Path, out: Path, case_id: str, tlparse: str | None) -> tuple[list[Path], str]:
    """Zip the trace logs (and tlparse's output, when installed) into out/; the sentence the report says of them."""
    with tempfile.TemporaryDirectory(prefix="reprokit-tlparse-") as tmp:
        copy, html = Path(tmp) / "logs", Path(tmp) / "html"
        copy.mkdir()
        logs, left = _copy_logs(trace_dir, copy)
        skipped = f" (left out: {'; '.join(left)[:300]})" if left else ""
        if not logs:
            return [], "The run under `TORCH_TRACE` wrote no trace log" + skipped + ", so there is nothing for tlparse."
        zips = [_zip(copy, out / f"{case_id}-trace.zip")]
        sentence = (
            f"Attached: `{zips[0].name}`, the raw `TORCH_TRACE` logs of the same run ({len(logs)} file(s))" + skipped
        )
        if tlparse is None:
            return zips, sentence + "; tlparse was not installed where this report was written."
        # One log: that file (tlparse 0.4.3's --latest refuses the file it picks); ranks: one report over them all.
        source = [str(copy / logs[0])] if len(logs) == 1 else [str(copy), "--all-ranks-html"]
        proc = subprocess.run(
            [tlparse, *source, "-o", str(html), "--overwrite", "--no-browser"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if proc.returncode != 0 or not (html / "index.html").is_file():
            said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
            return zips, sentence + f"; tlparse failed on it: {code_span(next(iter(said)))}."
        zips.append(_zip(html, out / f"{case_id}-tlparse.zip"))
    return zips, sentence + f", and `{zips[1].name}`, the whole tlparse output (open `index.html`)."
