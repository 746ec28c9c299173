"""`tracker --issues-json DIR` and `upstream --issues-json DIR`: the linked issues whose comment waits on their own
script (held "not triaged") are triaged from gh-shaped JSON files (DIR/<number>.json, what `gh issue view N --json
...` prints), so the tracker reaches a standing without gh or a network. The standings are taken in memory, as
`triage N --record` would keep them; nothing is written to issue-states.yaml."""

from __future__ import annotations

import datetime
from pathlib import Path

from reprokit.model.issue_states import IssueState
from reprokit.model.schema import InputError
from reprokit.tracker import linked, triage, triage_request
from reprokit.tracker.issue import issue_json


def issue_file(folder: Path, number: int) -> Path | None:
    path = folder / f"{number}.json"
    return path if path.is_file() else None


def with_triages(
    data: linked.Corpus, folder: Path, request: triage_request.Request, out: Path, log=print, case_id: str | None = None
) -> linked.Corpus:
    """The corpus with a fresh triage standing for every linked issue that has none and a file in `folder` (with
    `case_id`, only the issue that case links: `upstream ID` needs no other)."""
    if not folder.is_dir():
        raise InputError(f"--issues-json {folder}: not a folder (one <number>.json per issue, as gh prints it)")
    states = dict(data.states.issues)
    for item in linked.linked(data):
        if case_id is not None and item.cd.case.id != case_id:
            continue
        known = states.get(item.number)
        if (known and known.triage) or (path := issue_file(folder, item.number)) is None:
            continue
        issue = issue_json.read(path)
        if issue.number != item.number:
            raise InputError(f"{path}: it is issue #{issue.number}, not #{item.number}")
        try:
            done = triage.triage(issue, request, data.matrix, out / "triage", log=log)
        except InputError as err:  # the script needs a GPU this machine lacks, ...: that issue stays untriaged
            log(f"#{item.number}: not triaged from {path.name}: {err}")
            continue
        base = known or IssueState(state="closed" if issue.closed else "open", checked=datetime.date.today())
        states[item.number] = base.model_copy(
            update={
                "triage": done.triage.record_line(),
                "triage_torch": done.triage.observed_on or "none run",
                **linked.triage_data(done.standing),
            }
        )
        log(f"#{item.number}: triaged from {path.name}: {done.standing.line()}")
    return linked.Corpus(data.cases, data.loaded, data.matrix, data.states.model_copy(update={"issues": states}))
