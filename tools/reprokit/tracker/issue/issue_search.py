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
from reprokit.tracker.text.bug_text import code_span

FIELDS = "number,title,state,url,isPullRequest,body"
LIMIT = 10
MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class Found:
    number: int
    title: str
    state: str
    is_pr: bool
    body: str = ""


def command(key: str) -> list[str]:
    return [
        "gh",
        "search",
        "issues",
        "--repo",
        "pytorch/pytorch",
        "--include-prs",
        "--json",
        FIELDS,
        "--limit",
        str(LIMIT),
        "--",
        key,
    ]


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
            found.append(
                Found(
                    item["number"],
                    str(item.get("title") or "")[:200],
                    str(item.get("state") or "?").lower()[:10],
                    bool(item.get("isPullRequest")),
                    str(item.get("body") or "")[:65_536],
                )
            )
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


@dataclass(frozen=True)
class Searched:
    """The searches made (or read from a file) and what each found; `how` says which."""

    results: dict[str, list[Found]]
    how: str
    keys: list[str]


def search(keys: list[str], search_json: Path | None = None) -> Searched:
    keys = [k for k in dict.fromkeys(keys) if k]
    if not keys:
        return Searched({}, "", [])
    if search_json is not None:
        return Searched({keys[0]: read(search_json)}, f"read from {search_json.name}", keys)
    return Searched({k: found for k in keys if (found := run_gh(k)) is not None}, "run now", keys)


def duplicates(searched: Searched, exception: str, op: str | None, skeleton_words: set[str]) -> list[Found]:
    """Open issues (not pull requests) the search found that report the same failure: their title or body names the
    exception class and either the failing operator or most of the message's words."""
    out = {}
    for found in searched.results.values():
        for f in found:
            if f.is_pr or f.state != "open":
                continue
            text = f"{f.title}\n{f.body}"
            if exception not in text:
                continue
            words = set(re.findall(r"[a-z][a-z_]{2,}", text.lower()))
            if (op and re.search(rf"\b{re.escape(op)}\b", text)) or (
                skeleton_words and len(skeleton_words & words) >= 0.6 * len(skeleton_words)
            ):
                out[f.number] = f
    return sorted(out.values(), key=lambda f: -f.number)


def related(keys: list[str], search_json: Path | None = None, searched: Searched | None = None) -> list[str]:
    """The report's lines: each search, then every issue or PR found (once), newest number first."""
    searched = searched or search(keys, search_json)
    keys, results, how = searched.keys, searched.results, searched.how
    if not keys:
        return []
    if not results:
        return [
            "Related issues: not searched here (`gh` is not installed); search for duplicates first:",
            "",
            *[f"- {code_span(shlex.join(command(k)[:6] + ['--', k]))}" for k in keys],
            "",
        ]
    seen = {f.number: f for found in results.values() for f in found}
    lines = [
        f"Related issues and pull requests ({len(seen)} found by "
        + ", ".join(code_span(shlex.join(["gh", "search", "issues", "--", k])) for k in results)
        + f", {how}):",
        "",
    ]
    for f in sorted(seen.values(), key=lambda f: -f.number):
        lines.append(f"- #{f.number} ({f.state} {'pull request' if f.is_pr else 'issue'}): {_title(f.title)}")
    return [*lines, ""] if seen else [*lines[:-1], "", "none.", ""]
