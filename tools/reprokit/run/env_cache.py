"""The torch environments' cache on disk: its size as `du` counts it, and freeing it as `df` sees it.

uv installs an environment by hard-linking the files of its shared cache (uv/archive-v0/<id>/, one unpacked wheel
each), so one file is often two names: a size counts each inode once, and removing an environment frees nothing
until the cache's archives that no environment links any more are removed too (the garbage collection here). uv's
index of its cache still names those archives, so uv is then told to forget their packages (`uv cache clean PKG`):
an index entry whose archive is gone makes every later install of that wheel fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.releases import release_key
from reprokit.model.schema import EnvironmentProblem, InputError


def cache_root() -> Path:
    return Path(os.environ.get("REPROKIT_CACHE", Path.home() / ".cache" / "reprokit"))


def uv_binary() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv  # the PyPI package ships the binary (a dependency of reprokit)

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        raise EnvironmentProblem("--torch needs uv (pip install uv) to build the release's environment") from None


def _inodes(*paths: Path) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(device, inode) -> (bytes on disk, links found under paths, links it has) for every regular file under
    `paths`, links unfollowed."""
    found: dict[tuple[int, int], tuple[int, int, int]] = {}
    for path in paths:
        for dirpath, _dirs, files in os.walk(path):
            for name in files:
                try:
                    info = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                key = (info.st_dev, info.st_ino)
                size, links, nlink = found.get(key, (info.st_blocks * 512, 0, info.st_nlink))
                found[key] = (size, links + 1, nlink)
    return found


def disk_usage(*paths: Path) -> int:
    """Bytes on disk under `paths`, each inode counted once (as `du` counts hard links)."""
    return sum(size for size, _links, _nlink in _inodes(*paths).values())


def cache_size() -> int:
    return disk_usage(cache_root() / "envs", cache_root() / "uv")


def human_size(size: float) -> str:
    """Bytes in binary units (1 GiB = 1024 MiB), as du -h and df -h count them."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} GiB"


@dataclass(frozen=True)
class Row:
    """One line of `reprokit envs`: an environment (its version), "uv cache" or "total"."""

    name: str
    size: int  # its bytes on disk, each inode counted once (the rows overlap: environments share uv's files)
    frees: int | None  # what removing it gives back: the files no other environment links (None: not removable alone)


# What `listing` measured, kept beside the environments with the cache's state it was measured in: a listing of an
# unchanged cache reads it instead of walking tens of gigabytes again (an environment is never changed after it is
# built: a new, removed or rebuilt one, or an archive added to or removed from uv's cache, changes the state).
SIZES_FILE = ".sizes.json"


def _cache_state() -> list:
    """What a change of the cache's environments changes: each one's folder and completion marker, uv's archives."""
    state: list = []
    for folder in sorted((cache_root() / "envs").glob("torch-*")):
        marker = folder / ".complete"
        state.append([folder.name, folder.stat().st_mtime_ns, marker.stat().st_mtime_ns if marker.exists() else 0])
    for folder in (cache_root() / "uv", cache_root() / "uv" / "archive-v0"):
        state.append([folder.name, folder.stat().st_mtime_ns if folder.exists() else 0])
    return state


def listing() -> list[Row]:
    """Every built environment (oldest release first) with its bytes on disk and what `--remove` of it frees, uv's
    shared wheel cache as "uv cache", and the total; measured once per state of the cache (SIZES_FILE)."""
    kept = cache_root() / "envs" / SIZES_FILE
    state = _cache_state()
    try:
        known = json.loads(kept.read_text())
        if known["state"] == state:
            return [Row(name, size, frees) for name, size, frees in known["rows"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    rows = _measured()
    if kept.parent.is_dir():  # whole or not at all: another listing may read it meanwhile
        partial = kept.with_name(f"{SIZES_FILE}.{os.getpid()}")
        partial.write_text(json.dumps({"state": state, "rows": [[r.name, r.size, r.frees] for r in rows]}))
        os.replace(partial, kept)
    return rows


def _measured() -> list[Row]:
    """The listing, measured: sizes overlap (an environment's files are mostly links into uv's cache, several
    environments link one file); `frees` does not: a file counts there only for the one environment linking it."""
    envs = cache_root() / "envs"
    folders = sorted(
        (p for p in envs.glob("torch-*") if p.is_dir()), key=lambda p: release_key(p.name.removeprefix("torch-"))
    )
    frees = dict.fromkeys((p.name for p in folders), 0)
    owned = _inodes(cache_root() / "uv")
    linked: dict[tuple[int, int], set[str]] = {}
    for folder in folders:
        for key, found in _inodes(folder).items():
            linked.setdefault(key, set()).add(folder.name)
            size, links, nlink = owned.get(key, (found[0], 0, found[2]))
            owned[key] = (size, links + found[1], nlink)
    for key, names in linked.items():
        size, links, nlink = owned[key]
        if len(names) == 1 and links >= nlink:  # every link of it lies in this environment or uv's cache
            frees[next(iter(names))] += size
    rows = [Row(p.name.removeprefix("torch-"), disk_usage(p), frees[p.name]) for p in folders]
    return rows + [Row("uv cache", disk_usage(cache_root() / "uv"), None), Row("total", cache_size(), cache_size())]


@dataclass(frozen=True)
class Freed:
    counted: int  # bytes of the files whose last link was removed
    df: int  # how much more the file system says is free afterwards (other writers move it too)
    archives: int  # uv cache archives no environment linked any more, removed


def _free_bytes(path: Path) -> int:
    while not path.exists():
        path = path.parent
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def _only_here(*paths: Path) -> tuple[bool, int]:
    """Whether every file under `paths` has all its links there, and the bytes of those that do (what deleting
    `paths` gives back)."""
    found = _inodes(*paths).values()
    return (
        all(links >= nlink for _s, links, nlink in found),
        sum(size for size, links, nlink in found if links >= nlink),
    )


def unlinked_archives() -> list[Path]:
    """uv's cache archives (one unpacked wheel each) none of whose files is linked from anywhere else: no
    environment uses them."""
    return [
        archive
        for archive in sorted((cache_root() / "uv").glob("archive-v*/*"))
        if archive.is_dir() and not archive.is_symlink() and _only_here(archive)[0]
    ]


def _delete(paths: list[Path]) -> int:
    freed = _only_here(*paths)[1]
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
    return freed


def remove(versions: list[str], everything: bool = False) -> Freed:
    """Delete the environments of `versions` and then uv's archives that no environment links any more (all of
    them, and the whole uv cache, with everything=True); what was freed, counted and as `df` sees it."""
    envs = cache_root() / "envs"
    unknown = [v for v in versions if not (envs / f"torch-{v}").is_dir()]
    if unknown and not everything:
        raise InputError(f"--remove {' '.join(unknown)}: no such environment (`reprokit envs` lists them)")
    targets = [p for p in envs.glob("torch-*") if everything or p.name.removeprefix("torch-") in versions]
    before = _free_bytes(cache_root())
    counted = _delete(targets + ([cache_root() / "uv"] if everything else []))
    archives = [] if everything else unlinked_archives()
    packages = sorted({name for archive in archives for name in _packages_in(archive)})
    counted += _delete(archives)
    if packages:  # uv's index forgets them too (their other archives, still linked by environments, free nothing)
        subprocess.run(
            [uv_binary(), "cache", "clean", "-q", *packages],
            capture_output=True,
            check=False,
            env={**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv")},
        )
    return Freed(counted, _free_bytes(cache_root()) - before, len(archives))


def free(versions: list[str], everything: bool = False) -> str:
    """`reprokit envs --remove/--clear`: remove, then say in one line what was freed, counted two ways: the files
    whose last link went, and df's figure (which other writers on the disk move too)."""
    freed = remove(versions, everything=everything)
    archives = f" and {freed.archives} archives of uv's cache no environment links any more" if freed.archives else ""
    return (
        f"removed {', '.join(versions) if not everything else 'every environment and uv cache'}{archives} "
        f"under {cache_root()}: freed {human_size(freed.counted)} (files whose last link went); "
        f"df: {human_size(max(freed.df, 0))} more free (other writers on this disk move that figure too)"
    )


def table() -> list[str]:
    """`reprokit envs`: one line per environment (torch, size, frees), then how to read the two figures."""
    lines = [f"{'torch':>12}  {'size':>10}  {'frees':>10}"]
    for row in listing():
        frees = human_size(row.frees) if row.frees is not None else "-"
        lines.append(f"{row.name:>12}  {human_size(row.size):>10}  {frees:>10}")
    lines.append(
        f"{'':>12}  size: each file counted once, though environments share files (hard links into uv's "
        "cache), so the sizes add up to more than the total; frees: what --remove VERSION gives back (the "
        f"files no other environment links); --clear frees the total. Under {cache_root()} ($REPROKIT_CACHE)"
    )
    return lines


def _packages_in(archive: Path) -> list[str]:
    """The distributions an unpacked wheel holds, by their .dist-info folders (`name-version.dist-info`)."""
    return [info.name.removesuffix(".dist-info").rsplit("-", 1)[0] for info in archive.glob("*.dist-info")]
