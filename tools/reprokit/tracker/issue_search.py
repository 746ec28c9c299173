"""Issues and pull requests of pytorch/pytorch that may already know a failure: `gh search issues` run on torch's own
error text and on the operator that fails (read-only), or what that search printed, read from a file
(`--search-json FILE`: offline machines, tests). The report lists what was found, with the searches that found it;
where neither is available it says so and gives the commands."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.model.untrusted_text import plain
from reprokit.tracker.bug_text import code_span

FIELDS = "number,title,state,url,isPullRequest"
LIMIT = 10
MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class Found:
    number: int
    title: str
    state: str
    is_pr: bool


def command(key: str) -> list[str]:
    return ["gh", "search", "issues", "--repo", "pytorch/pytorch", "--include-prs", "--json", FIELDS, "--limit",
            str(LIMIT), "--", key]


def _parse(text: str, source: str) -> list[Found]:
    try:
        data = json.loads(text)
    except ValueError:
        raise InputError(f"{source}: not JSON (expected what `gh search issues --json {FIELDS}` prints)") from None
    if not isinstance(data, list):
        raise InputError(f"{source}: not a JSON array of issues")
    found = []
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("number"), int) and not isinstance(item["number"], bool):
            found.append(Found(item["number"], str(item.get("title") or "")[:200],
                               str(item.get("state") or "?").lower()[:10], bool(item.get("isPullRequest"))))
    return found


def read(path: Path) -> list[Found]:
    if not path.is_file() or path.stat().st_size > MAX_BYTES:
        raise InputError(f"{path}: not a regular file of at most {MAX_BYTES} bytes")
    return _parse(path.read_text(encoding="utf-8"), str(path))


def run_gh(key: str) -> list[Found] | None:
    """What `gh search issues` finds for key; None when gh is not installed or the search fails."""
    if shutil.which("gh") is None:
        return None
    try:
        done = subprocess.run(command(key), capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None
    return _parse(done.stdout, "gh search issues") if done.returncode == 0 else None


def failing_op(message: str) -> str | None:
    """The operator torch names in its error (aten.X / torch.ops.ns.X), the other thing issues are found by."""
    m = re.search(r"(?:aten|torch\.ops\.\w+)\.(\w+)", message or "")
    return m.group(1) if m else None


def _title(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", " ".join(plain(text).split()))


def related(keys: list[str], search_json: Path | None = None) -> list[str]:
    """The report's lines: each search, then every issue or PR found (once), newest number first."""
    keys = [k for k in dict.fromkeys(keys) if k]
    if not keys:
        return []
    if search_json is not None:
        results, how = {keys[0]: read(search_json)}, f"read from {search_json.name}"
    else:
        results = {k: found for k in keys if (found := run_gh(k)) is not None}
        how = "run now"
    if not results:
        return ["Related issues: not searched here (`gh` is not installed); search for duplicates first:", "",
                *[f"- {code_span(shlex.join(command(k)[:6] + ['--', k]))}" for k in keys], ""]
    seen = {f.number: f for found in results.values() for f in found}
    lines = [f"Related issues and pull requests ({len(seen)} found by "
             + ", ".join(code_span(shlex.join(['gh', 'search', 'issues', '--', k])) for k in results) + f", {how}):",
             ""]
    for f in sorted(seen.values(), key=lambda f: -f.number):
        lines.append(f"- #{f.number} ({f.state} {'pull request' if f.is_pr else 'issue'}): {_title(f.title)}")
    return [*lines, ""] if seen else [*lines[:-1], "", "none.", ""]
