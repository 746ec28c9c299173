"""The compatibility site: static HTML rendered from the results store with the Jinja templates in templates/site/.

    index.html        targets: torch shown, hardware, rates with denominators; every case
    matrix.html       case x target x torch release, filterable and sortable (site.js; a plain table without it)
    cases/<id>.html   one case: its claim, scripts and every recorded verdict per target and release
    ledger.html       the claims ledger per target (ledger.judge, as reports/README.md)
    sweeps.html       the model sweep's failure rates per target

Pure like report.py: the figures are the same tallies and rates the Markdown prints, nothing but recorded times is
shown, and the same store gives the same bytes. Everything a case or a run wrote is escaped (autoescape).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2

from reprokit.model.corpus import CaseDir
from reprokit.model.matrix import Matrix
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict, rate_text, reproduce_rate
from reprokit.publish import ledger, sweep_report
from reprokit.publish.render import Published, gather
from reprokit.publish.report import recorded_before_change
from reprokit.publish.run_facts import finished_text, jobs_text, machine_text
from reprokit.store.store import Loaded, Store
from reprokit.store.views import release_of

STATIC = ("site.css", "site.js")
LEDGER_CLASS = {v: v.replace(" ", "-") for v in ledger.SYMBOL}


@dataclass(frozen=True)
class Cell:
    """One verdict as every cell shows it: symbol and word (never colour alone), and what went wrong."""

    word: str
    symbol: str
    detail: str = ""

    @classmethod
    def of(cls, rec: Record | None) -> Cell | None:
        if rec is None:
            return None
        detail = ""
        if not rec.verdict.ran or (rec.verdict.needs_attention and not rec.exception):
            detail = rec.why
        elif rec.exception and rec.verdict not in (Verdict.DOES_NOT_REPRODUCE, Verdict.FIX_WORKS):
            detail = f"{rec.exception.rsplit('.', 1)[-1]}: {rec.headline()}"
        return cls(str(rec.verdict), rec.verdict.symbol, detail)


@dataclass(frozen=True)
class Row:
    """One case and dtype on one target and torch release: its variants' verdicts and what the repro did."""

    case: str
    category: str
    source: str
    target: str
    release: str
    builds: str
    current: bool  # the release the target's reports show
    dtype: str
    repro: Cell | None
    fixed: Cell | None
    article_fix: Cell | None
    stage: str
    graph_breaks: str
    error: str  # the repro's exception, with its message's headline
    since: str  # 'since 2.9.1' / 'fixed in 2.12.1', on the current release only
    version: str = ""  # "earlier case version" / "case version unknown": the records are not of the case as it is now

    @property
    def verdicts(self) -> str:
        return " ".join(c.word for c in (self.repro, self.fixed, self.article_fix) if c)


def source_of(cd: CaseDir) -> str:
    """Where a case comes from: its `source` field when cases grow one, else the article or upstream."""
    return getattr(cd.case, "source", None) or ("article" if cd.case.article else "upstream")


def rows(p: Published) -> list[Row]:
    cases = {c.case.id: c for c in p.cases}
    out = []
    for target, every in p.histories.items():
        shown = p.views[target].release
        for release, records in every.items():
            grouped: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
            for rec in records:
                if rec.case in cases:
                    grouped[(rec.case, rec.dtype)][rec.variant] = rec
            builds = ", ".join(sorted({r.torch for r in records}))
            earlier, unknown = recorded_before_change(records, cases)
            for (case_id, dtype), variants in sorted(grouped.items()):
                repro = variants.get("repro")
                breaks = (repro.dynamo or {}).get("graph_breaks") if repro else None
                out.append(Row(
                    case_id, cases[case_id].case.category, source_of(cases[case_id]), target, release, builds,
                    release == shown, dtype, Cell.of(repro), Cell.of(variants.get("fixed")),
                    Cell.of(variants.get("article_fix")), (repro.stage or "") if repro else "",
                    "" if breaks is None else str(breaks),
                    f"{repro.exception}: {repro.headline()}" if repro and repro.exception else "",
                    p.since.get(target, {}).get(f"{case_id}/repro@{dtype}", "") if release == shown else "",
                    "earlier case version" if (case_id, dtype) in earlier
                    else "case version unknown" if (case_id, dtype) in unknown else ""))
    targets = list(p.histories)
    return sorted(out, key=lambda r: (r.case, targets.index(r.target), list(p.histories[r.target]).index(r.release),
                                      r.dtype))


def target_rows(p: Published) -> list[dict]:
    out = []
    for name, view in p.views.items():
        out.append({"name": name, "hardware": p.descriptions.get(name, ""), "on": machine_text(view.environment),
                    "release": view.release, "pin": view.pin, "off_pin": view.off_pin, "builds": view.builds,
                    "history": view.history, "tally": view.counts,
                    "rate": rate_text(*view.rate),
                    "finished": finished_text(view.header) if view.header else ""})
    return out


def category_rates(p: Published) -> list[tuple[str, list[str]]]:
    """Per category and target, repros failing as claimed out of those run (report.render_index's figures)."""
    cases = {c.case.id: c for c in p.cases}
    by_category = {name: defaultdict(list) for name in p.views}
    for name, view in p.views.items():
        for r in view.records:
            if r.case in cases:
                by_category[name][cases[r.case].case.category].append(r)
    return [(category, [rate_text(*reproduce_rate(by_category[name][category]), digits=0) for name in p.views])
            for category in sorted({c.case.category for c in p.cases})]


def ledger_rows(p: Published) -> tuple[list[dict], dict[str, dict[str, int]]]:
    cases = {c.case.id: c for c in p.cases}
    out, totals = [], {t: defaultdict(int) for t in p.views}
    for claim in p.claims.claims if p.claims else []:
        cells = []
        for target, view in p.views.items():
            verdict, detail = ledger.judge(claim, cases, view.records, p.sweeps.get(target), target=target)
            totals[target][verdict] += 1
            cells.append({"target": target, "verdict": verdict, "label": ledger.SYMBOL[verdict],
                          "css": LEDGER_CLASS[verdict], "detail": detail})
        out.append({"claim": claim, "cells": cells})
    return out, {t: dict(sorted(c.items())) for t, c in totals.items()}


def sweep_sections(p: Published) -> list[dict]:
    out = []
    for name, res in p.sweeps.items():
        by_column = defaultdict(list)
        for r in res.records:
            by_column[sweep_report.column(r)].append(r)
        out.append({"name": name, "hardware": p.descriptions.get(name, ""), "on": machine_text(res.environment),
                    "release": res.release, "run": res.header, "jobs": jobs_text(res.header) if res.header else "",
                    "finished": finished_text(res.header) if res.header else "", "cells": len(res.records),
                    "summary": sweep_report.summary_rows(res),
                    "columns": [(c, sweep_report.rate(rs)) for c, rs in sorted(by_column.items())],
                    "failing": sum(r.verdict.compile_failure for r in res.records)})
    return out


def case_claims(p: Published) -> dict[str, list]:
    found = defaultdict(list)
    for claim in p.claims.claims if p.claims else []:
        for case_id in claim.cases:
            found[case_id].append(claim)
    return found


def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("reprokit.publish", "templates/site"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def pages(p: Published) -> dict[str, str]:
    """Relative path -> page text: every page and static file of the site."""
    env = environment()
    legend = [Cell(str(v), v.symbol) for v in Verdict]
    common = {"legend": legend, "targets": list(p.views), "ledger_symbols": ledger.SYMBOL, "ledger_css": LEDGER_CLASS}
    every = rows(p)
    out = {
        "index.html": env.get_template("index.html.j2").render(
            **common, up="", targets_table=target_rows(p), categories=category_rates(p), cases=p.cases,
            source_of=source_of, article_cases=sum(c.case.article is not None for c in p.cases),
            sweeps=sweep_sections(p)),
        "matrix.html": env.get_template("matrix.html.j2").render(
            **common, up="", rows=every, filters=matrix_filters(every)),
        "sweeps.html": env.get_template("sweeps.html.j2").render(**common, up="", sweeps=sweep_sections(p)),
    }
    claim_rows, totals = ledger_rows(p)
    out["ledger.html"] = env.get_template("ledger.html.j2").render(
        **common, up="", claims=claim_rows, totals=totals, has_claims=p.claims is not None,
        case_ids={c.case.id for c in p.cases})
    claims_of, case_page = case_claims(p), env.get_template("case.html.j2")
    for cd in p.cases:
        scripts = [(f"{variant}.py" if variant != "repro" else "repro.py", cd.script(variant).read_text("utf-8"))
                   for variant in cd.variants()]
        out[f"cases/{cd.case.id}.html"] = case_page.render(
            **common, up="../", cd=cd, case=cd.case, source=source_of(cd), scripts=scripts,
            rows=[r for r in every if r.case == cd.case.id], claims=claims_of.get(cd.case.id, []))
    for name in STATIC:
        out[name] = resources.files("reprokit.publish").joinpath("templates", "site", name).read_text("utf-8")
    return dict(sorted(out.items()))


def matrix_filters(every: list[Row]) -> list[tuple[str, str, list[str]]]:
    """(data attribute, label, values) of each filter of matrix.html, values in a stable order."""
    releases = sorted({r.release for r in every}, key=lambda rel: (release_of(rel), rel))
    return [("category", "category", sorted({r.category for r in every})),
            ("source", "source", sorted({r.source for r in every})),
            ("target", "target", list(dict.fromkeys(r.target for r in every))),
            ("release", "torch release", ["current", *releases]),
            ("dtype", "dtype", sorted({r.dtype for r in every})),
            ("stage", "stage", sorted({r.stage for r in every if r.stage})),
            ("verdict", "verdict", [str(v) for v in Verdict if any(str(v) in r.verdicts.split() for r in every)])]


def write(out: Path, site: dict[str, str]) -> list[Path]:
    written = []
    for rel, text in site.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def build(root: Path, out: Path, matrix: Matrix, store: Store) -> list[Path]:
    """`reprokit site`: every page from the store (matrix.yaml's targets) and root's cases, written under out."""
    loaded = Loaded()
    for name in matrix.targets:
        loaded.add(store.load(name, outputs=False))
    return write(out, pages(gather(root, matrix, loaded)))
