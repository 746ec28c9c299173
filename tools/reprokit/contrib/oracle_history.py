"""An oracle's regex against every release's recorded message of its case (`validate`, from the store).

A `match` of several branches (`a|b`) is loose when one branch alone accepts a release's message while another
release's same exception is not matched at all (that release "fails differently"): the branch then tells the two
apart by wording that changed between releases (torch 2.14 prints a guard as `torch.sym_min(...)` in the error it
printed as `min(...)` since 2.8), not by the failure the case is about.
"""

from __future__ import annotations

from pathlib import Path

import regex

from reprokit.model.case import Case, Oracle
from reprokit.model.records import Record
from reprokit.store.store import Store

_FLAGS = regex.compile(r"^\(\?[aiLmsux]+\)")  # a leading inline flag applies to every branch


def branches(pattern: str) -> list[str]:
    """The top-level alternatives of a regex (outside groups and character classes), each with the pattern's
    leading inline flags; one element when the pattern has no top-level `|`."""
    prefix = m.group(0) if (m := _FLAGS.match(pattern)) else ""
    body, out, depth, in_class, start, i = pattern[len(prefix) :], [], 0, False, 0, 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(body[start:i])
            start = i + 1
        i += 1
    out.append(body[start:])
    return [prefix + b for b in out]


def _found(pattern: str, text: str) -> bool:
    try:
        return regex.search(pattern, text, regex.MULTILINE, timeout=2.0) is not None
    except (regex.error, TimeoutError):
        return False


def _text(oracle: Oracle, rec: Record) -> str:
    if oracle.kind == "stdout":
        return rec.stdout_tail
    if oracle.kind == "stderr":
        return rec.stderr_tail
    return rec.message or ""


def _exception_fits(oracle: Oracle, rec: Record) -> bool:
    if oracle.kind != "raises" or not rec.exception:
        return oracle.kind != "raises"
    return not oracle.exception or oracle.exception.rsplit(".", 1)[-1] == rec.exception.rsplit(".", 1)[-1]


def loose_branches(oracle: Oracle, records: list[Record]) -> list[tuple[str, Record, Record]]:
    """(branch, the record it alone matches, a record of the same exception the oracle does not match) for each
    branch of a several-branch `match` that accepts one release's message while another release fails
    differently with the same exception."""
    parts = branches(oracle.match or "")
    if len(parts) < 2:
        return []
    seen = [(r, text) for r in records if _exception_fits(oracle, r) and (text := _text(oracle, r))]
    unmatched = [r for r, text in seen if not _found(oracle.match or "", text)]
    out = []
    for n, branch in enumerate(parts):
        others = parts[:n] + parts[n + 1 :]
        alone = next(
            (
                r
                for r, text in seen
                if _found(branch, text)
                and not any(_found(o, text) for o in others)
                and any(u.exception == r.exception for u in unmatched)
            ),
            None,
        )
        if alone is not None:
            out.append((branch, alone, next(u for u in unmatched if u.exception == alone.exception)))
    return out


def recorded_message_problems(root: Path, cases: dict[str, tuple[Path, Case]]) -> list[str]:
    """Every case's oracle (per target, with its overrides) against the repro messages recorded on every release."""
    store = Store(root / "results")
    problems = []
    for target in store.targets():
        loaded = store.load(target, "cases", outputs=False)
        by_case: dict[str, list[Record]] = {}
        for rec in loaded.records:
            if rec.variant == "repro" and rec.verdict.ran and rec.case in cases:
                by_case.setdefault(rec.case, []).append(rec)
        for case_id, records in sorted(by_case.items()):
            yml, case = cases[case_id]
            oracle = case.expect_for(target).repro
            if not oracle.match or len(branches(oracle.match)) < 2:
                continue
            if oracle.kind in ("stdout", "stderr"):
                loaded.with_outputs(records)
            for branch, alone, other in loose_branches(oracle, records):
                problems.append(
                    f"{yml}: repro.match branch {branch!r} alone matches torch {alone.torch}'s {target} message "
                    f"({alone.headline()[:80]!r}), while torch {other.torch}'s same {other.exception or 'output'} "
                    f"fails differently ({other.headline()[:80]!r}): a branch must name the failure, not wording "
                    "that changed between releases"
                )
    return problems
