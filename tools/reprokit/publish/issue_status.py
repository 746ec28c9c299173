"""The upstream-issues page: for each case made from a public pytorch/pytorch issue (`source: upstream`), the issue's
state, the torch version it reports, and the recorded releases on which our repro reproduces it (first, last, every
stretch), per target. Two disagreements are flagged, because each is news for someone:

- the issue is closed, yet the repro still reproduces on the newest recorded release (news for the maintainers);
- the issue is open, yet the repro does not reproduce on the newest recorded release (fixed without the issue being
  closed, or our repro misses what the issue describes: the case says no more than what it ran).

Pure: records and cases in, Markdown out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.untrusted_text import md_cell
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.markdown import table

ISSUE_NUMBER = re.compile(r"^https://github\.com/pytorch/pytorch/issues/(\d+)$")


@dataclass(frozen=True)
class CaseStanding:
    """One upstream case on one target: its repro's verdict per recorded release, oldest first."""

    case: CaseDir
    target: str
    verdicts: list[tuple[str, Verdict]]  # (release, verdict) for every recorded release of the repro
    machine: str = ""  # where the repro's verdict depends on the machine: the one these verdicts were given on

    @property
    def label(self) -> str:
        """The target, and the machine where the verdicts are one machine's: "cpu", "cpu on AMD EPYC"."""
        return f"{self.target} on {self.machine}" if self.machine else self.target

    @property
    def reproducing(self) -> list[str]:
        return [rel for rel, v in self.verdicts if v is Verdict.REPRODUCES]

    @property
    def newest(self) -> tuple[str, Verdict] | None:
        ran = [(rel, v) for rel, v in self.verdicts if v.ran]
        return ran[-1] if ran else None

    def stretches(self) -> list[tuple[str, str]]:
        """Runs of consecutive recorded releases that reproduce: [(first, last), ...]."""
        out: list[tuple[str, str]] = []
        previous = False
        for rel, verdict in self.verdicts:
            if verdict is Verdict.REPRODUCES:
                out.append((out.pop()[0], rel) if previous else (rel, rel))
            previous = verdict is Verdict.REPRODUCES
        return out

    def disagreement(self) -> str:
        """Where the issue's state and the newest recorded verdict disagree, in words; "" where they do not."""
        state, newest = self.case.case.issue_state, self.newest
        if newest is None:
            return ""
        rel, verdict = newest
        if _older(rel, self.case.case.reported_on):  # a release before the one the issue reports says nothing of it
            return ""
        if state == "closed" and verdict is Verdict.REPRODUCES:
            return f"closed upstream, still reproduces on {rel}" + (f" ({self.machine})" if self.machine else "")
        # one machine's "does not reproduce" says nothing of a fix where another machine's verdict differs
        if state == "open" and verdict is Verdict.DOES_NOT_REPRODUCE and not self.machine:
            return f"open upstream, does not reproduce on {rel}"
        return ""

    def flag(self) -> str:
        """The disagreement as the Markdown page flags it."""
        found = self.disagreement()
        return f"⚑ {found}" if found else ""


def _older(release: str, reported_on: str | None) -> bool:
    """Whether `release` is older than the torch the issue reports (a dev or nightly build counts as its release)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(release).release < Version(reported_on or "").release
    except InvalidVersion:  # "unknown", a nightly label: nothing to compare
        return False


def release_verdict(records: list[Record]) -> Verdict | None:
    """A release's verdict for one case's repro over its dtypes: reproduces if any dtype does, else the first
    dtype's verdict that ran, else the first one's (skipped)."""
    if not records:
        return None
    for rec in records:
        if rec.verdict is Verdict.REPRODUCES:
            return rec.verdict
    ran = [r for r in records if r.verdict.ran]
    return (ran or records)[0].verdict


def machine_verdicts(records: list[Record], machines: dict[str, str]) -> dict[str, Verdict]:
    """One release's repro records (each dtype, each build) -> machine -> its verdict there (reproduces where any
    dtype does, as issue_status.release_verdict says a release's verdict)."""
    seen: dict[str, list[Record]] = {}
    for rec in records:
        if machines.get(rec.run_id):
            seen.setdefault(machines[rec.run_id], []).append(rec)
        for machine, word in (rec.on_other_machines or {}).items():
            seen.setdefault(machine, []).append(rec.model_copy(update={"verdict": Verdict(word)}))
    return {machine: verdict for machine, recs in sorted(seen.items()) if (verdict := release_verdict(recs))}


def machine_standings(
    cd: CaseDir,
    target: str,
    every: dict[str, list[Record]],
    splits: dict[tuple[str, str], list[Record]],
    machines: dict[str, str],
) -> list[CaseStanding]:
    """One standing per machine where two machines' verdicts that ran differ on a recorded release; [] where none
    do (the repro's verdict does not depend on the machine)."""
    per_release = {}
    for release, records in every.items():
        repro = [r for r in records if r.case == cd.case.id and Role.of(r.variant) is Role.REPRO]
        builds = {id(r): r for rec in repro for r in [rec, *splits.get((release, rec.key), [])]}
        per_release[release] = machine_verdicts(list(builds.values()), machines)
    if not any(len({v for v in found.values() if v.ran}) > 1 for found in per_release.values()):
        return []
    names = sorted({machine for found in per_release.values() for machine in found})
    return [
        CaseStanding(cd, target, [(rel, found[name]) for rel, found in per_release.items() if name in found], name)
        for name in names
    ]


def standings(
    cases: list[CaseDir],
    histories: dict[str, dict[str, list[Record]]],
    splits: dict[str, dict[tuple[str, str], list[Record]]] | None = None,
    machines: dict[str, str] | None = None,
) -> list[CaseStanding]:
    """Every upstream case on every target that recorded its repro, in case order: one standing per machine where
    its verdict depends on the machine (`machines`: run id -> machine), else one."""
    upstream = {c.case.id: c for c in cases if c.case.source == "upstream"}
    out = []
    for case_id in sorted(upstream):
        for target, every in histories.items():
            per_machine = machine_standings(
                upstream[case_id], target, every, (splits or {}).get(target, {}), machines or {}
            )
            found = per_machine or [standing_of(upstream[case_id], target, every)]
            out += [s for s in found if s.verdicts]
    return out


def standing_of(case: CaseDir, target: str, every: dict[str, list[Record]]) -> CaseStanding:
    """One case (of any source) on one target: its repro's verdict on each release that recorded it. A case with a
    machine-dependent repro record (another machine gave another verdict) has no standing on the target: which of its
    other releases' verdicts hold on which machine is not known, so nothing is flagged from them."""
    mine = {
        release: sorted(
            (r for r in records if r.case == case.case.id and Role.of(r.variant) is Role.REPRO), key=lambda r: r.dtype
        )
        for release, records in every.items()
    }
    if any(r.machine_dependent for records in mine.values() for r in records):
        return CaseStanding(case, target, [])
    verdicts = [
        (release, verdict) for release, records in mine.items() if (verdict := release_verdict(records)) is not None
    ]
    return CaseStanding(case, target, verdicts)


def issue_links(case: CaseDir) -> list[tuple[str, str]]:
    """(number, URL) of each pytorch/pytorch issue the case links."""
    return [(m.group(1), link) for link in case.case.links if (m := ISSUE_NUMBER.match(link))]


def _issues(case: CaseDir) -> str:
    return ", ".join(f"[#{number}]({link})" for number, link in issue_links(case))


def _stretches_text(standing: CaseStanding) -> str:
    parts = [first if first == last else f"{first}–{last}" for first, last in standing.stretches()]
    return ", ".join(parts) if parts else "none recorded"


def render(
    cases: list[CaseDir],
    histories: dict[str, dict[str, list[Record]]],
    splits: dict[str, dict[tuple[str, str], list[Record]]] | None = None,
    machines: dict[str, str] | None = None,
) -> str | None:
    """The page, or None when the corpus has no upstream case with a record; a row per machine where the repro's
    verdict depends on the machine."""
    rows_of = standings(cases, histories, splits, machines)
    if not rows_of:
        return None
    rows = []
    for s in rows_of:
        c = s.case.case
        first = s.reproducing[0] if s.reproducing else "—"
        last = s.reproducing[-1] if s.reproducing else "—"
        newest = s.newest
        rows.append(
            [
                f"[`{c.id}`](../cases/{c.id}/)",
                _issues(s.case),
                c.area or "",
                f"{c.issue_state} ({md_cell(c.issue_checked or '?', 20)})",
                md_cell(c.reported_on, 20),
                md_cell(s.label, 60),
                first,
                last,
                _stretches_text(s),
                f"{newest[1].symbol} {newest[1]} on {newest[0]}" if newest else "not run (skipped)",
                s.flag(),
            ]
        )
    flagged = [s for s in rows_of if s.flag()]
    closed = [s for s in flagged if s.case.case.issue_state == "closed"]
    still_open = [s for s in flagged if s.case.case.issue_state != "closed"]
    recorded = {rel for every in histories.values() for rel in every}
    return "\n".join(
        [
            "# Upstream issues",
            "",
            f"{len({s.case.case.id for s in rows_of})} cases made from public pytorch/pytorch issues, each a repro written "
            "for this corpus from the issue's description. Per case and target: the releases on which the repro "
            "reproduces the issue's failure (its oracle in case.yaml), out of the recorded releases "
            f"({', '.join(sorted(recorded, key=release_key))}). A case that does not reproduce says only that this repro "
            "did not fail as the issue describes on that release. An issue's state is as read from GitHub on the date "
            "beside it ([`issue-states.yaml`](../issue-states.yaml), refreshed by the issue-states workflow); "
            "`reprokit tracker` drafts the comment each flagged issue needs.",
            "",
            f"Flagged: {len({f.case.case.id for f in closed})} closed issues whose repro still reproduces on the newest "
            f"recorded release of a target ({len(closed)} case-target rows), {len({f.case.case.id for f in still_open})} "
            f"open issues whose repro does not ({len(still_open)} rows).",
            "",
            table(
                rows,
                [
                    "case",
                    "issue",
                    "area",
                    "state (checked)",
                    "reported on",
                    "target",
                    "first reproduces",
                    "last reproduces",
                    "reproduces on",
                    "newest recorded",
                    "flag",
                ],
            ),
            "",
        ]
    )


def index_section(cases: list[CaseDir], histories: dict[str, dict[str, list[Record]]]) -> list[str]:
    """The index's pointer to the page: how many upstream cases, how many reproduce on their newest release, flags."""
    rows_of = standings(cases, histories)
    if not rows_of:
        return []
    newest = [s.newest for s in rows_of if s.newest]
    reproducing = sum(1 for _, v in newest if v is Verdict.REPRODUCES)
    flagged = sum(1 for s in rows_of if s.flag())
    return [
        "## Upstream issues",
        "",
        f"{len({s.case.case.id for s in rows_of})} cases from public pytorch/pytorch issues, {len(rows_of)} "
        f"case-target pairs recorded: {reproducing} reproduce on their newest recorded release, {flagged} disagree "
        "with their issue's state. Per case, the releases where each reproduces: "
        "[upstream-issues.md](upstream-issues.md).",
        "",
    ]
