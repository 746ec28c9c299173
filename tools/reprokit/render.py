"""Every published page from the records: the current view of each target (report.py), its sweep
(sweep_report.py), the index with the claims ledger. Pure: the same records give the same bytes."""

from __future__ import annotations

from pathlib import Path

from . import corpus, report, sweep_report
from .schema import Matrix, load_claims
from .store import Loaded
from .views import current, releases, since_or_fixed, version_changes


def write_all(root: Path, out: Path, matrix: Matrix, loaded: Loaded) -> list[Path]:
    pins = {name: t.pins.torch for name, t in matrix.targets.items()}
    views = {name: v for name in matrix.targets if (v := current(loaded, name, "cases", pins[name])) is not None}
    sweeps = {name: v for name in matrix.targets if (v := current(loaded, name, "sweep", pins[name])) is not None}
    changes = {name: version_changes(loaded, name, "cases") for name in views}
    histories = {name: releases(loaded, name, "cases") for name in views}
    since = {name: since_or_fixed(histories[name], view.release) for name, view in views.items()}
    cases = corpus.discover(root / "cases")
    claims_file = root / "claims.yaml"
    claims = load_claims(claims_file, {c.case.id for c in cases}) if claims_file.exists() else None
    descriptions = {n: t.description for n, t in matrix.targets.items()}
    out.mkdir(parents=True, exist_ok=True)
    written = sweep_report.write_reports(out, sweeps, descriptions)
    return report.write_reports(out, views, cases, descriptions, claims, sweeps, changes, since, histories) + written
