"""Records made while a record's case_hash was the digest of the whole case folder (case.yaml's titles and notes
too) are given the identity of the same version of the case (case_identity.identity_of: what the run executed and how it was
judged), read from the repository's git history: the hash a re-record of an unchanged executed part would store.
A hash that no committed version of the case had is left as it is (it stays history)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections import Counter
from pathlib import Path, PurePosixPath

from reprokit.model.case_identity import identity_of

HASH_FIELD = re.compile(r'"case_hash": "([0-9a-f]{16})"')


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=300).stdout


def folder_digest(files: list[tuple[str, bytes]]) -> str:
    """The case_hash records kept until the identity: every file's name and bytes, case.yaml whole."""
    digest = hashlib.sha256()
    for relative, data in sorted(files, key=lambda file: PurePosixPath(file[0]).parts):
        digest.update(relative.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


def versions(root: Path, case: str) -> list[tuple[str, list[tuple[str, bytes]]]]:
    """Every committed version of cases/<case>/, newest first: (commit, its files as (path in the folder, bytes)),
    links left out as the corpus does."""
    folder, found = f"cases/{case}", []
    for commit in _git(root, "log", "--format=%H", "--", folder + "/").decode().split():
        files = []
        for line in _git(root, "ls-tree", "-r", "-z", commit, "--", folder + "/").split(b"\0"):
            meta, _, path = line.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob" and parts[0] != b"120000":
                relative = str(PurePosixPath(path.decode("utf-8", "replace")).relative_to(folder))
                if "__pycache__" not in PurePosixPath(relative).parts:
                    files.append((relative, _git(root, "cat-file", "blob", parts[2].decode())))
        found.append((commit, files))
    return found


def identities(root: Path, case: str) -> dict[str, str]:
    """Old case_hash (the whole folder) -> the identity of that version, for every committed version of the case."""
    return {folder_digest(files): identity_of(files) for _, files in versions(root, case) if files}


def rehash(root: Path) -> Counter:
    """Rewrite the case_hash of every record of the cases suite under root/results to its version's identity; counts
    of what happened (rehashed, already an identity, unknown: no committed version had it)."""
    counts: Counter = Counter()
    known: dict[str, dict[str, str]] = {}
    for path in sorted((root / "results").glob("*/cases/*.jsonl")):
        if path.name.endswith((".output.jsonl", ".runs.jsonl")):
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        for n, line in enumerate(lines):
            found = HASH_FIELD.search(line)
            if not found:
                continue
            case = json.loads(line)["case"]
            if case not in known:
                known[case] = identities(root, case)
            old = found.group(1)
            new = known[case].get(old)
            if new is None:
                counts["already an identity" if old in known[case].values() else "unknown"] += 1
                continue
            counts["rehashed" if new != old else "unchanged"] += 1
            lines[n] = line[: found.start(1)] + new + line[found.end(1) :]
        path.write_text("\n".join(lines), encoding="utf-8")
    return counts
