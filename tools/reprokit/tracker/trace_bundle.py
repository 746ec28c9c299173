"""The TORCH_TRACE logs of a contained run, zipped for the issue, and tlparse's report of them.

The trace folder was writable by the case: every entry is read as untrusted (regular files directly in it, no
links, no FIFOs, bounded), and tlparse reads a copy of those bytes in a folder the case never saw."""

from __future__ import annotations

import os
import subprocess
import tempfile
import zipfile
from pathlib import Path

from reprokit.contrib.case_files import regular_files
from reprokit.tracker.bug_text import code_span

TRACE_CAP = 64 << 20  # per log file: a trace of a small repro is a few MB
INSTALL_TLPARSE = "pip install 'reprokit[upstream]'  (or: pip install tlparse)"


def _zip(files: dict[str, bytes], path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(files.items()):
            zf.writestr(name, data)
    return path


def _tree(folder: Path) -> dict[str, bytes]:
    """Every regular file under folder (tlparse's output), by its relative path; links are not followed."""
    found = {}
    for top, _, names in os.walk(folder, followlinks=False):
        for name in names:
            path = Path(top) / name
            if path.is_file() and not path.is_symlink():
                found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def bundle(trace_dir: Path, out: Path, case_id: str, tlparse: str | None) -> tuple[list[Path], str]:
    """Zip the trace logs (and tlparse's output, when installed) into out/; the sentence the report says of them."""
    logs, left = regular_files(trace_dir, TRACE_CAP)
    skipped = f" (left out: {'; '.join(left)[:300]})" if left else ""
    if not logs:
        return [], "The run under `TORCH_TRACE` wrote no trace log" + skipped + ", so there is nothing for tlparse."
    zips = [_zip(logs, out / f"{case_id}-trace.zip")]
    sentence = (f"Attached: `{zips[0].name}`, the raw `TORCH_TRACE` logs of the same run ({len(logs)} file(s))"
                + skipped)
    if tlparse is None:
        return zips, sentence + "; tlparse was not installed where this report was written."
    with tempfile.TemporaryDirectory(prefix="reprokit-tlparse-") as tmp:
        copy, html = Path(tmp) / "logs", Path(tmp) / "html"
        copy.mkdir()
        for name, data in logs.items():
            (copy / name).write_bytes(data)
        # One log: that file (tlparse 0.4.3's --latest refuses the file it picks); ranks: one report over them all.
        source = [str(copy / next(iter(logs)))] if len(logs) == 1 else [str(copy), "--all-ranks-html"]
        proc = subprocess.run([tlparse, *source, "-o", str(html), "--overwrite", "--no-browser"],
                              capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0 or not (html / "index.html").is_file():
            said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
            return zips, sentence + f"; tlparse failed on it: {code_span(next(iter(said)))}."
        zips.append(_zip(_tree(html), out / f"{case_id}-tlparse.zip"))
    return zips, sentence + f", and `{zips[1].name}`, the whole tlparse output (open `index.html`)."
