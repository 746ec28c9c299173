"""What a flag of the upstream page needs beside it so that "open upstream, does not reproduce" is not read as "fixed":
how the case is linked to its issue (the same failure, or only related: issue-states.yaml's `link`), whether the case
ever reproduced here (on any recorded release of any target, its history runs included), and what triage said of the
issue's own script where it was run (issue-states.yaml's `triage`, on `triage_torch`). Facts only, from the records and
issue-states.yaml: nothing here judges the issue."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.model.corpus import CaseDir
from reprokit.model.issue_states import IssueStates, issue_numbers
from reprokit.model.releases import release_key
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.render import Published
from reprokit.store.views import release_of

SAME, RELATED, NOT_JUDGED = "same", "related", "not judged"


@dataclass(frozen=True)
class FlagFacts:
    link: str  # SAME, RELATED or NOT_JUDGED
    link_why: str  # issue-states.yaml's reason for the link kind ("" where none)
    reproduced_on: list[str]  # "cpu 2.8.0", ... where the case's repro reproduced here (empty: never)
    triage: str  # the sentence triage recorded for the issue's own script ("" where it was not triaged)
    triage_torch: str

    @property
    def link_text(self) -> str:
        if self.link == SAME:
            return "linked as the same failure (the case fails the way the issue reports)"
        if self.link == RELATED:
            return "linked as related only: the case tests something near the issue, not its own failure"
        return "link kind not judged yet (same failure or related: issue-states.yaml)"

    @property
    def reproduced_text(self) -> str:
        if not self.reproduced_on:
            return (
                "never reproduced here, on any recorded release of any target: its not reproducing says nothing "
                "of a fix"
            )
        return f"reproduced here on: {', '.join(self.reproduced_on)}"

    @property
    def triage_text(self) -> str:
        if not self.triage:
            return "the issue's own script: not triaged (reprokit triage N --record)"
        return f"the issue's own script (triage, torch {self.triage_torch or 'not named'}): {self.triage}"


def flag_facts(cd: CaseDir, p: Published) -> FlagFacts:
    states: IssueStates = p.issue_states
    known = [states.issues[n] for n in issue_numbers(cd.case) if n in states.issues]
    linked = next((s for s in known if s.link), None)
    triaged = next((s for s in known if s.triage), None)
    reproduced: dict[str, set[str]] = {}
    for target, every in p.histories.items():
        for release, records in every.items():
            for rec in records:
                if (
                    rec.case == cd.case.id
                    and Role.of(rec.variant) is Role.REPRO
                    and (
                        rec.verdict is Verdict.REPRODUCES
                        or str(Verdict.REPRODUCES) in (rec.on_other_machines or {}).values()
                    )
                ):
                    reproduced.setdefault(target, set()).add(release)
    for target, runs in p.last_runs.items():
        last = runs.get(cd.case.id)
        if last and last.record.verdict is Verdict.REPRODUCES:
            reproduced.setdefault(target, set()).add(f"{release_of(last.record.torch)} (history)")
    return FlagFacts(
        linked.link if linked and linked.link else NOT_JUDGED,
        (linked.link_why or "") if linked else "",
        [f"{target} {', '.join(sorted(rels, key=release_key))}" for target, rels in reproduced.items()],
        (triaged.triage or "") if triaged else "",
        (triaged.triage_torch or "") if triaged else "",
    )
