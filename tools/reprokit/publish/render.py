"""Every published page from the records: the current view of each target (report.py), its sweep
(sweep_report.py), the index with the claims ledger; the HTML site (website.py) reads the same `Published`.
Pure: the same records give the same bytes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.model import corpus, issue_states
from reprokit.model.claims import Claims, load_claims
from reprokit.model.corpus import CaseDir
from reprokit.model.issue_states import IssueStates
from reprokit.model.matrix import Matrix, Target
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.publish.pages import report, sweep_report
from reprokit.store.backlog_journal import BACKLOG, KeptBacklog, kept_backlog
from reprokit.store.last_runs import LastRun, last_runs
from reprokit.store.machines import machine_of
from reprokit.store.store import Loaded
from reprokit.store.views import (
    View,
    build_split,
    current,
    know_content,
    releases,
    since_or_fixed,
    version_changes,
)


@dataclass(frozen=True)
class Published:
    """What every page shows, gathered once from the store, the cases, matrix.yaml and claims.yaml."""

    views: dict[str, View]  # target -> the current view of its cases
    sweeps: dict[str, View]  # target -> the current view of its sweep
    changes: dict[str, list[tuple[str, str, str, Verdict, Verdict]]]
    histories: dict[str, dict[str, list[Record]]]  # target -> release -> records, oldest release first
    since: dict[str, dict[str, str]]
    cases: list[CaseDir]
    claims: Claims | None
    descriptions: dict[str, str]
    # target -> (release, key) -> each build's current record, where builds of one release disagree (views.build_split)
    splits: dict[str, dict[tuple[str, str], list[Record]]] = field(default_factory=dict)
    machines: dict[str, str] = field(default_factory=dict)  # run id -> the machine it ran on (store/machines.py)
    # target -> case -> when and on what it last ran there, where all its records there are history (store/last_runs)
    last_runs: dict[str, dict[str, LastRun]] = field(default_factory=dict)
    targets: dict[str, Target] = field(default_factory=dict)  # matrix.yaml's targets, in its order
    ran_on: dict[str, list[str]] = field(default_factory=dict)  # target -> the devices its recorded runs saw
    issue_states: IssueStates = field(default_factory=IssueStates)  # issue-states.yaml: link kinds, triage standings
    backlog: KeptBacklog | None = None  # results/backlog/: a merged `reprokit backlog` kept in the store


def gather(root: Path, matrix: Matrix, loaded: Loaded) -> Published:
    pins = {name: t.pins.torch for name, t in matrix.targets.items()}
    found = corpus.discover(root / "cases", on_error=lambda why: print(f"reprokit: {why}", file=sys.stderr))
    states = issue_states.load(root)
    cases = issue_states.applied(found, states)  # the tracker's states; a bad case left out
    know_content(
        loaded, cases, root / "sweep"
    )  # from here on, records of a case's earlier content are history, not shown
    claims_file = root / "claims.yaml"
    claims = load_claims(claims_file, {c.case.id for c in cases}) if claims_file.exists() else None
    views = {
        name: shown(loaded, v, claims)
        for name in matrix.targets
        if (v := current(loaded, name, "cases", pins[name])) is not None
    }
    sweeps = {
        name: shown(loaded, v, claims)
        for name in matrix.targets
        if (v := current(loaded, name, "sweep", pins[name])) is not None
    }
    histories = {name: releases(loaded, name, "cases") for name in views}
    figured = {case for claim in (claims.claims if claims else []) if claim.figures for case in claim.cases}
    loaded.with_outputs(
        [r for every in histories.values() for recs in every.values() for r in recs if r.case in figured]
    )  # the printed figures a claim judges, on every release
    return Published(
        views=views,
        sweeps=sweeps,
        changes={name: version_changes(loaded, name, "cases") for name in views},
        histories=histories,
        since={name: since_or_fixed(histories[name], view.release) for name, view in views.items()},
        cases=cases,
        claims=claims,
        descriptions={n: t.description for n, t in matrix.targets.items()},
        splits={name: build_split(loaded, name, "cases") for name in views},
        machines={run_id: machine_of(header) for run_id, header in sorted(loaded.runs.items())},
        last_runs={name: last_runs(loaded, name, cases) for name in matrix.targets},
        targets=dict(matrix.targets),
        ran_on=devices_seen(loaded),
        issue_states=states,
        backlog=kept_backlog(root / "results" / BACKLOG),
    )


def devices_seen(loaded: Loaded) -> dict[str, list[str]]:
    """Target -> the devices its recorded runs saw, as the run headers name them (the GPU; a CPU target's CPU model)."""
    seen: dict[str, set[str]] = {}
    for header in loaded.runs.values():
        device = header.device if header.device != "cpu" else machine_of(header)
        if device:
            seen.setdefault(header.target, set()).add(device)
    return {target: sorted(devices) for target, devices in sorted(seen.items())}


def shown(loaded: Loaded, view: View, claims: Claims | None) -> View:
    """The view, its records carrying their output tails where a page quotes them (read for those records only, not
    for the whole store): a JUnit failure's body (a run that needs attention), a sweep cell's metrics, and the
    configurations a claimed rate counts (the FP8_CONFIG lines of the cases of a claim with `sweep:`)."""
    counted = {
        case for claim in (claims.claims if claims else []) if claim.sweep or claim.figures for case in claim.cases
    }
    loaded.with_outputs(
        [r for r in view.records if r.verdict.needs_attention or r.suite == "sweep" or r.case in counted]
    )
    return view


def write_all(root: Path, out: Path, matrix: Matrix, loaded: Loaded) -> list[Path]:
    p = gather(root, matrix, loaded)
    out.mkdir(parents=True, exist_ok=True)
    written = sweep_report.write_reports(out, p.sweeps, p.descriptions)
    return (
        report.write_reports(
            out,
            p.views,
            p.cases,
            p.descriptions,
            p.claims,
            p.sweeps,
            p.changes,
            p.since,
            p.histories,
            p.splits,
            p.machines,
            p.last_runs,
        )
        + written
    )
