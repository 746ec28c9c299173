"""Views over the results store: what a report of one target shows, and the history of every record.

The current view of a target is its pinned torch release (matrix.yaml `pins.torch`) when that release is recorded,
else the newest release recorded, which the reports then flag. A release gathers its builds (2.13.0 and 2.13.0+cpu
are one release): for each case, variant and dtype the newest current record wins, and the report names every build
shown. A record is current unless it is superseded: made with a run identity (its case_hash: what ran and how it
was judged, never the case's description) that is no longer the case's (`Loaded.content`, from `know_content`); views, rates and pages show current records only, the store keeps the
rest as history. Where the current records of two builds of one release disagree, `build_split` gives both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from reprokit.model.case_identity import content_hash, sweep_contents
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record, RunHeader
from reprokit.model.releases import release_key
from reprokit.model.verdict import Tally, Verdict, decisive, is_change, tally
from reprokit.store.machines import across_builds, machine_of, release_of
from reprokit.store.store import Loaded


@dataclass(frozen=True)
class View:
    target: str
    suite: str
    release: str
    records: list[Record]
    runs: list[RunHeader]  # the runs whose records are shown, oldest first
    pin: str | None = None
    history: list[str] = field(default_factory=list)  # every release recorded for the target and suite, oldest first
    # Runs (case, variant, dtype) of this release recorded only with a case's or the sweep's earlier content: history,
    # not shown, and not a run of what the corpus holds now (set by `current`).
    superseded: int = 0

    @property
    def header(self) -> RunHeader | None:
        return self.runs[-1] if self.runs else None

    @property
    def environment(self) -> dict:
        """The machine facts of the newest run; for a run on the CPU of a machine with an accelerator, without the
        accelerator's (its name, compute capability, driver): the run did not use it."""
        if not self.header:
            return {}
        facts = self.header.environment
        if self.header.device == "cpu" and facts.get("device_name"):
            facts = {k: v for k, v in facts.items() if k not in ("device_name", "compute_capability", "driver")}
        return facts

    @property
    def builds(self) -> list[str]:
        return sorted({r.torch for r in self.records})

    @property
    def off_pin(self) -> bool:
        """The view shows another release than the target's pin (the pin is not recorded)."""
        return self.pin is not None and release_of(self.pin) != self.release

    @cached_property
    def counts(self) -> Tally:
        """The view's tally, counted once for every page that shows it (records of a view do not change)."""
        return tally(self.records)

    @property
    def rate(self) -> tuple[int, int]:
        """(repros that failed as claimed, repros that ran): verdict.reproduce_rate of the view's records."""
        return self.counts.reproduce, self.counts.repros_run

    def by_key(self) -> dict[str, Record]:
        return {r.key: r for r in self.records}


def know_content(loaded: Loaded, cases: list[CaseDir], sweep_dir: Path | None = None) -> Loaded:
    """The store with each case's content now, and the sweep's (`sweep_dir`): records of other content are superseded
    from here on."""
    loaded.content = {cd.case.id: content_hash(cd.path) for cd in cases}
    loaded.content |= sweep_contents(sweep_dir) if sweep_dir is not None else {}
    return loaded


def superseded(rec: Record, content: dict[str, str]) -> bool:
    """A record that is history, not current: of case content that is no longer the case's, or with no content hash at
    all (recorded before hashes were kept: what it ran cannot be told, so it decides nothing now). A store without its
    corpus (content empty: an --out store) knows no content: there every record counts."""
    if not content:
        return False
    if not rec.case_hash:
        return True
    now = content.get(rec.case)
    return bool(now and rec.case_hash != now)


def releases(loaded: Loaded, target: str, suite: str) -> dict[str, list[Record]]:
    """Release -> its current records (newest per case, variant and dtype), oldest release first."""
    grouped: dict[str, dict[str, Record]] = defaultdict(dict)
    builds: dict[tuple[str, str], list[Record]] = defaultdict(list)  # (release, key) -> its current record per build
    release_of_build: dict[str, str] = {}  # a store holds few builds and many records: each build is parsed once
    for rec in loaded.records:
        if rec.target != target or rec.suite != suite or superseded(rec, loaded.content):
            continue
        release = release_of_build.get(rec.torch) or release_of_build.setdefault(rec.torch, release_of(rec.torch))
        mine, key = grouped[release], rec.key
        builds[(release, key)].append(rec)
        if key not in mine or mine[key].recorded_at <= rec.recorded_at:
            mine[key] = rec
    for (release, key), found in builds.items():  # builds of one release on two machines that disagree
        if len({r.torch for r in found}) > 1:
            grouped[release][key] = across_builds(grouped[release][key], found, loaded.runs)
    return {rel: [rec for _, rec in sorted(grouped[rel].items())] for rel in sorted(grouped, key=release_key)}


def build_split(loaded: Loaded, target: str, suite: str) -> dict[tuple[str, str], list[Record]]:
    """(release, key) -> the current record of each build of the release, newest first, where the builds' verdicts
    on the same case content disagree on one machine (2.13.0+cpu reproduces, 2.13.0+cu130 does not): the pages show
    every build."""
    by_build: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
    for rec in loaded.records:
        if rec.target == target and rec.suite == suite and not superseded(rec, loaded.content):
            mine = by_build[(release_of(rec.torch), rec.key)]
            if rec.torch not in mine or mine[rec.torch].recorded_at <= rec.recorded_at:
                mine[rec.torch] = rec
    return {
        where: sorted(builds.values(), key=lambda r: r.recorded_at, reverse=True)
        for where, builds in sorted(by_build.items())
        if len(builds) > 1 and _builds_disagree(list(builds.values()), loaded)
    }


def _builds_disagree(builds: list[Record], loaded: Loaded) -> bool:
    """Two builds disagree on one machine (or an unknown one): builds that disagree only between machines are a
    machine difference (machines.across_builds marks the release's record), not a build split."""
    machine = {r.torch: machine_of(loaded.runs.get(r.run_id)) for r in builds}
    return any(
        a.verdict != b.verdict
        and (machine[a.torch] == machine[b.torch] or not machine[a.torch] or not machine[b.torch])
        for n, a in enumerate(builds)
        for b in builds[n + 1 :]
    )


def current_identities(loaded: Loaded) -> set:
    """The identities of the records the views and pages use (one per case, variant, dtype, target, suite and
    release, and each build's where builds disagree): results.json's `current`."""
    out = set()
    for target, suite in {(r.target, r.suite) for r in loaded.records}:
        out |= {rec.identity for recs in releases(loaded, target, suite).values() for rec in recs}
        out |= {rec.identity for recs in build_split(loaded, target, suite).values() for rec in recs}
    return out


def view_of(
    loaded: Loaded,
    target: str,
    suite: str,
    release: str,
    pin: str | None = None,
    every: dict[str, list[Record]] | None = None,
) -> View:
    every = every if every is not None else releases(loaded, target, suite)
    records = every.get(release, [])
    ids = {r.run_id for r in records}
    runs = sorted((h for h in loaded.runs.values() if h.run_id in ids), key=lambda h: h.finished)
    return View(target, suite, release, records, runs, pin, list(every))


def current(loaded: Loaded, target: str, suite: str, pin: str | None) -> View | None:
    """The pinned release if recorded, else the newest recorded; None when the target has no records. Where every
    sweep record of the target is superseded, a view of none, which says how many cells were (the pinned release's,
    else the newest's): the sweep's report says its cells are to be run again, never leaves the target out as if it
    had none (a case's report lists its cases one by one: there a case of none is left out)."""
    every = releases(loaded, target, suite)
    old = _superseded_keys(loaded, target, suite)
    if not every and (suite != "sweep" or not old):
        return None
    recorded = every or old
    release = release_of(pin) if pin and release_of(pin) in recorded else sorted(recorded, key=release_key)[-1]
    view = view_of(loaded, target, suite, release, pin, every)
    shown = {r.key for r in view.records}
    return replace(view, superseded=len(old.get(release, set()) - shown))


def _superseded_keys(loaded: Loaded, target: str, suite: str) -> dict[str, set[str]]:
    """Release -> the keys of the target's records of that release that are superseded."""
    found: dict[str, set[str]] = defaultdict(set)
    for rec in loaded.records:
        if rec.target == target and rec.suite == suite and superseded(rec, loaded.content):
            found[release_of(rec.torch)].add(rec.key)
    return dict(found)


def version_changes(loaded: Loaded, target: str, suite: str) -> list[tuple[str, str, str, Verdict, Verdict]]:
    """(key, older release, newer release, before, after) for every verdict that changes between two consecutive
    recorded releases of a target."""
    every = list(releases(loaded, target, suite).items())
    out = []
    for (old_rel, old), (new_rel, new) in zip(every, every[1:], strict=False):
        before = {r.key: r for r in old}
        for rec in new:  # a flaky or machine-dependent verdict on either side is not a change (it shows as such)
            was = before.get(rec.key)
            if was is not None and is_change(was, rec):
                out.append((rec.key, old_rel, new_rel, was.verdict, rec.verdict))
    return out


def since_or_fixed(every: dict[str, list[Record]], current_release: str) -> dict[str, str]:
    """Per key, from the recorded releases up to the current one: 'since 2.9.1' when it reproduces now (the first
    release of the reproducing stretch that ends at the current one), 'fixed in 2.12.1' when it reproduced before and
    no longer does; nothing when there is one release or no change. Only recorded releases count, and only decisive
    verdicts (a machine-dependent or flaky one is no release's change: verdict.is_change)."""
    order = [rel for rel in every if release_key(rel) <= release_key(current_release)]
    verdicts: dict[str, list[tuple[str, Verdict | None]]] = defaultdict(list)  # None: not decisive
    for rel in order:
        for rec in every[rel]:
            if not decisive(rec):
                verdicts[rec.key].append((rel, None))
            elif rec.verdict in (Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE):
                verdicts[rec.key].append((rel, rec.verdict))
    out = {}
    for key, seen in verdicts.items():
        if len(seen) < 2 or seen[-1][0] != current_release or seen[-1][1] is None:
            continue
        now = seen[-1][1]
        start = len(seen) - 1
        while start > 0 and seen[start - 1][1] == now:
            start -= 1
        if start == 0 or seen[start - 1][1] is None:
            continue  # the same verdict on every recorded release, or a stretch after one no release decides
        if now is Verdict.REPRODUCES:
            out[key] = f"since {seen[start][0]}"
        else:
            out[key] = f"fixed in {seen[start][0]}"
    return out


HISTORY_FIELDS = ("case", "variant", "dtype", "target", "torch", "device", "verdict", "recorded_at")


def history_rows(loaded: Loaded, cases: list[str], torch: str | None) -> list[Record]:
    """`reprokit history`: every record matching the case globs and a torch build or release, in a stable order."""
    import fnmatch

    rows = [
        r
        for r in loaded.records
        if (not cases or any(fnmatch.fnmatchcase(r.case, g) for g in cases))
        and (not torch or torch in (r.torch, release_of(r.torch)))
    ]
    return sorted(
        rows, key=lambda r: (r.case, r.variant, r.dtype, r.target, release_key(release_of(r.torch)), r.torch, r.device)
    )


def repro_history(
    loaded: Loaded, target: str, case_id: str, dtypes: Sequence[str]
) -> tuple[str, list[tuple[str, str]]]:
    """For a bug report: the dtype to show (the first that reproduces on the newest release recorded, else the
    first) and (torch build, verdict) of its repro on every recorded release, oldest first."""
    by_release = {
        rel: {r.dtype: r for r in recs if r.case == case_id and r.variant == "repro"}
        for rel, recs in releases(loaded, target, "cases").items()
    }
    latest = list(by_release.values())[-1] if by_release else {}
    dtype = next((d for d in dtypes if getattr(latest.get(d), "verdict", None) is Verdict.REPRODUCES), dtypes[0])
    return dtype, [(recs[dtype].torch, str(recs[dtype].verdict)) for recs in by_release.values() if dtype in recs]


def history_text(loaded: Loaded, cases: list[str], torch: str | None, as_json: bool) -> str:
    """`reprokit history`'s output: history_rows as a table with a count under it, or as JSON (each record's fields
    as strings, with its run id) for a script."""
    import json

    rows = history_rows(loaded, cases, torch)
    if as_json:
        return json.dumps(
            [{f: str(getattr(r, f)) for f in HISTORY_FIELDS} | {"run_id": r.run_id} for r in rows], indent=1
        )
    from tabulate import tabulate

    table = tabulate(
        [[str(getattr(r, f)) for f in HISTORY_FIELDS] for r in rows], headers=list(HISTORY_FIELDS), tablefmt="simple"
    )
    return f"{table}\n{len(rows)} records"
