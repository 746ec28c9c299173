"""`reprokit triage` and `reprokit tracker` as the command line asks them: the arguments checked in the order the
commands always checked them, the work done by triage.py, linked.py and offline_triage.py, and what they print. The
standing is stdout's first line (a script reads it); progress (the releases, the builds) goes to `log`, stderr."""

from __future__ import annotations

import shlex
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.run.request import load_root_matrix, target_of
from reprokit.tracker import linked, offline_triage, triage, triage_request
from reprokit.tracker.issue import issue_json
from reprokit.tracker.judging import triage_standing


def triage_issue(
    root: Path,
    request: triage_request.Request,
    *,
    number: int | None,
    issue_file: str | None,
    report_dir: str | None = None,
    record: bool = False,
    say=print,
    log=print,
) -> int:
    """Triage one issue (`number`, read with gh, or `issue_file`, --issue-json as given: a mismatch names it so):
    `say` gets the standing, the signature, each run, where it was recorded and the draft's gh command; 2 where
    --issue-json holds another issue than the number given (said on stdout, as always)."""
    if number is None and not issue_file:
        raise InputError("triage: give the issue number, or --issue-json FILE")
    if issue_file:
        issue = issue_json.read(Path(issue_file))
    else:
        assert number is not None  # refused above
        issue = triage_request.from_gh(number)
    if number is not None and issue.number != number:
        say(f"reprokit: {issue_file} is issue #{issue.number}, not #{number}")
        return 2
    matrix = load_root_matrix(root)
    target_of(matrix, request.target)
    if request.here and request.releases:
        raise InputError("triage: --here runs this torch alone; --releases names others: give one of them")
    out = Path(report_dir).resolve() if report_dir else root / "reports" / "upstream"
    done = triage.triage(issue, request, matrix, out, ours=(root.resolve(),), log=log)
    say(done.standing.line())
    t = done.triage
    if t.signature is not None:
        say(
            f"  signature (torch {t.observed_on}; {t.source()}): "
            f"{t.signature.line()}" + (f"; {t.confirmed}" if t.confirmed else "")
        )
    for ran in done.runs:
        say(f"  torch {ran.release}: {ran.why or triage_standing.observed_line(ran.obs)}")
    if record:
        path = linked.record_triage(root, issue.number, t.record_line(), t.observed_on or "none run", t.standing)
        say(f"  recorded in {path}" if path else f"  not recorded: no case links #{issue.number}")
    if done.draft is not None:
        command = shlex.join(
            ["gh", "issue", "comment", str(issue.number), "--repo", "pytorch/pytorch", "--body-file", str(done.draft)]
        )
        say(f"  draft: {done.draft} (open it, write your own words on its first line)\n  post:  {command}")
    return 0


def tracker_lines(
    root: Path,
    store_folder: Path,
    request: triage_request.Request,
    *,
    numbers: bool = False,
    report_dir: str | None = None,
    issues_json: str | None = None,
    log=print,
) -> list[str]:
    """`reprokit tracker`: the linked issues' numbers alone, or one line per linked issue with the comment draft of
    each whose recorded runs disagree with its state (the issues not yet triaged triaged first, from issues_json, as
    `request` asks)."""
    matrix = load_root_matrix(root)
    data = linked.Corpus.read(root, store_folder, matrix)
    if numbers:
        return ["\n".join(str(n) for n in sorted({i.number for i in linked.linked(data)}))]
    out = Path(report_dir).resolve() if report_dir else root / "reports" / "upstream"
    if issues_json:  # the issues not yet triaged, from their own scripts, without gh
        data = offline_triage.with_triages(data, Path(issues_json).resolve(), request, out, log=log)
    rows = linked.drafts(data, out)
    lines = []
    for item, path, command in rows:
        lines.append(f"#{item.number} {item.state} (checked {item.checked})  {item.cd.case.id}: {item.line()}")
        if path is not None:
            lines.append(f"  draft: {path}\n  post:  {command}")
    needing = sum(1 for _, path, _ in rows if path is not None)
    lines.append(
        f"{len(rows)} linked issues; {needing} need a comment (drafts from recorded runs; `reprokit upstream "
        "ID` makes one from a run now)"
    )
    return lines
