"""What every page's footer says the site was built from: the repository's commit and that commit's date.

Never the wall clock, so that the same store at the same commit gives the same bytes; "unknown" where git or the
repository is absent (a copy of the files, a tarball).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "unknown"


@dataclass(frozen=True)
class BuildStamp:
    commit: str = UNKNOWN  # the full hash
    date: str = UNKNOWN  # the commit's date, ISO 8601 (git's %cI)

    @property
    def short(self) -> str:
        return self.commit[:12]


def from_git(root: Path) -> BuildStamp:
    """The commit checked out at root (`git log -1`), or an unknown stamp when git cannot say."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%H%n%cI"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return BuildStamp()
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2:
        return BuildStamp()
    return BuildStamp(commit=lines[0], date=lines[1])
