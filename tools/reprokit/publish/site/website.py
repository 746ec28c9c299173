"""The compatibility site: static HTML rendered from the results store with the Jinja templates in templates/site/.

    index.html             the search first; every case with its standing per target ("cpu: fixed in 2.10.0"), per
                           machine where its verdict depends on it (site/machines.py, site/standing.py), its issue's
                           state; the headline figures named; every target of matrix.yaml: torch shown, hardware, rates
                           with denominators, or "not recorded" with how to contribute a run
    grid-<target>.html     a target's cases x recorded torch releases, a permalink per cell, changes marked (one rule:
                           verdict.is_change), a case whose runs there are all history marked with its last run, the
                           two rates per release and their trend, the target's badge with its Markdown (site/grid.py,
                           site/standing.py, site/badges.py); for a target no run has recorded, a page that says so
    compare.html           two recorded columns (target@release) side by side, the cases that differ first
                           (site/compare.py)
    matrix.html            every record: case x target x torch release x dtype (site/rows.py)
    changes.html           verdict changes per release; changes-<release>.html one release's (site/changes.py)
    upstream.html          the upstream issues: state, flags, where each repro reproduces (issue_status.py)
    cases/<id>.html        one case: claim, issue, first bad / good releases, reproduce locally, every verdict
    cases/<id>/<file>      the case folder's scripts and case.yaml as plain files (site/case.py)
    ledger.html            the claims ledger per target (ledger.judge, as reports/README.md)
    sweeps.html            the model sweep's failure rates per target
    glossary.html          the verdict words: what each means, what it counts toward (publish/glossary.py)
    results.json           every record as `reprokit history --json` gives it, with its schema (site/data.py)
    badges/<target>.*      a shields.io endpoint (.json) and the badge drawn (.svg) per target (site/badges.py): the
                           torch.compile failure rate on the release shown, offered on the index and the grids
    *.gz                   beside matrix.html, the grids and results.json: their gzip copies (data.compressed)
    feed.xml               an Atom feed of the verdict changes, dated by release, absolute links (site/feed.py)

Search, filters and sorting (site.js; a pasted question's issues, its filler words, hardware words leading to their
targets: site/hardware_words.py) keep their state in the page's address; without JavaScript every table is
complete. Pure like report.py: the same store at the same commit (site/stamp.py) gives the same bytes. Everything a
case or a run wrote is escaped (autoescape, in the Atom feed too; JSON by json.dumps and `tojson`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jinja2

from reprokit.model.matrix import Matrix
from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.untrusted_text import bidi_safe, xml_text
from reprokit.model.verdict import Verdict
from reprokit.publish import glossary, issue_status
from reprokit.publish.pages import ledger, sweep_report
from reprokit.publish.render import Published, gather
from reprokit.publish.site.backlog import PAGE as BACKLOG_PAGE
from reprokit.publish.site.backlog import backlog_files
from reprokit.publish.site.badges import badges, offered
from reprokit.publish.site.case import case_facts, published_files
from reprokit.publish.site.changes import release_changes
from reprokit.publish.site.compare import comparison
from reprokit.publish.site.data import compressed, results_json, results_schema
from reprokit.publish.site.feed import FEED_ID, entries, feed_updated, site_address
from reprokit.publish.site.flag_facts import flag_facts
from reprokit.publish.site.grid import grids
from reprokit.publish.site.grid_page import grid_page
from reprokit.publish.site.hardware_words import hardware_search
from reprokit.publish.site.machines import Standings, flat, records_by_case, standings
from reprokit.publish.site.rows import (
    MACHINE_DEPENDENT,
    VERDICT_RANK,
    Cell,
    record_filters,
    rows,
    shortened,
    slug,
    source_of,
)
from reprokit.publish.site.stamp import BuildStamp, from_git
from reprokit.publish.site.standing import case_standings
from reprokit.publish.site.summaries import (
    LEDGER_CLASS,
    case_claims,
    category_rates,
    headline_figures,
    ledger_rows,
    sweep_sections,
    target_rows,
    unrecorded_targets,
)
from reprokit.store.store import Loaded, Store
from reprokit.store.views import current_identities, history_rows

STATIC = ("site.css", "site.js", "compare.js", "favicon.svg")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reprokit.publish", "templates/site"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=bidi_safe,
    )
    env.filters.update(short=shortened, slug=slug, xml=xml_text)
    env.globals.update(
        short_word={str(v): w for v, w in glossary.SHORT_WORD.items()} | {MACHINE_DEPENDENT: glossary.BY_MACHINE}
    )
    return env


def search_facts(p: Published) -> dict[str, str]:
    """What the search box matches beyond a row's own text: each case's title, category and issue numbers."""
    return {
        cd.case.id: " ".join([cd.case.title, cd.case.category, *(f"#{n}" for n, _ in issue_status.issue_links(cd))])
        for cd in p.cases
    }


def pages(
    p: Published, records: list[Record], stamp: BuildStamp, site_url: str | None = None, current: set | None = None
) -> dict[str, str]:
    """Long: relative path -> text of every page, data file and static file of the site, each rendered once from
    the same rows; `records` are every record of the store in `history` order (results.json), `current` the
    identities of those the pages use (every record when not given); `site_url` the site's address, which the
    feed's links start with (relative links without it)."""
    env = environment()
    every, changed = rows(p), release_changes(p)
    target_grids = grids(p, every)
    common = {
        "legend": [Cell(str(v), VERDICT_RANK[v]) for v in Verdict],
        "targets": list(p.views),
        "ledger_symbols": ledger.SYMBOL,
        "ledger_css": LEDGER_CLASS,
        "grids": target_grids,
        "stamp": stamp,
        "up": "",
        "skip": ("main", "the page's content"),
        "article_rate": f"{sweep_report.ARTICLE_FAILURE_RATE:.1%}",
        "has_backlog": p.backlog is not None,
    }
    facts = search_facts(p)
    by_case = records_by_case(p.histories)
    where = standings(p, by_case)  # case -> target -> its standings (per machine where it depends on it)
    unrecorded = unrecorded_targets(p)
    badge_files = badges(p)
    common["badges"] = offered(badge_files, site_address(site_url))
    out = {
        "index.html": env.get_template("index.html.j2").render(
            **{**common, "skip": ("cases", "the search and the cases")},
            targets_table=target_rows(p),
            categories=category_rates(p),
            cases=p.cases,
            source_of=source_of,
            article_cases=sum(c.case.article is not None for c in p.cases),
            newest_changes=changed[-1] if changed else None,
            facts=facts,
            figures=headline_figures(p),
            standings=case_standings(p.cases, where, p.last_runs),
            unrecorded=unrecorded,
            hardware=hardware_search(p),
            issues={cd.case.id: issue_status.issue_links(cd) for cd in p.cases},
            filters=[
                ("category", "category", sorted({c.case.category for c in p.cases})),
                ("source", "source", sorted({source_of(c) for c in p.cases})),
            ],
        ),
        "matrix.html": env.get_template("matrix.html.j2").render(
            **{**common, "skip": ("matrix", "the records")},
            rows=every,
            filters=record_filters(every),
            facts=facts,
            hardware=hardware_search(p),
        ),
        "sweeps.html": env.get_template("sweeps.html.j2").render(**common, sweeps=sweep_sections(p)),
        "changes.html": env.get_template("changes.html.j2").render(**common, releases=changed),
        "upstream.html": upstream_page(env, {**common, "facts": facts}, p, where),
        "glossary.html": env.get_template("glossary.html.j2").render(**common, entries=glossary.entries()),
        "compare.html": env.get_template("compare.html.j2").render(
            **{**common, "skip": ("compare-form", "the comparison")}, compare=comparison(p)
        ),
        "results.json": results_json(records, {r.identity for r in records} if current is None else current),
        "results.schema.json": results_schema(),
    }
    for grid in target_grids:
        out[grid.file] = grid_page(env, {**common, "skip": ("grid", "the grid"), "facts": facts}, p, grid, changed)
    for rc in changed:
        out[rc.file] = env.get_template("release.html.j2").render(**common, rc=rc, releases=changed)
    found = entries(changed)
    out["feed.xml"] = env.get_template("feed.xml.j2").render(
        entries=found, updated=feed_updated(found, stamp), stamp=stamp, feed_id=FEED_ID, base=site_address(site_url)
    )
    claim_rows, totals = ledger_rows(p)
    out["ledger.html"] = env.get_template("ledger.html.j2").render(
        **common,
        claims=claim_rows,
        totals=totals,
        has_claims=p.claims is not None,
        case_ids={c.case.id for c in p.cases},
    )
    for t in unrecorded:
        out[t["grid"]] = env.get_template("unrecorded.html.j2").render(**common, target=t)
    out.update(case_pages(env, {**common, "up": "../", "unrecorded_targets": unrecorded}, p, every, where, by_case))
    out.update(badge_files)
    if p.backlog is not None:
        page, drafts = backlog_files(p.backlog)
        out[BACKLOG_PAGE] = env.get_template("backlog.html.j2").render(**common, backlog=page)
        out.update(drafts)
    for name in STATIC:
        out[name] = resources.files("reprokit.publish").joinpath("templates", "site", name).read_text("utf-8")
    return dict(sorted(out.items()))


def case_pages(
    env: jinja2.Environment, common: dict, p: Published, every: list, found: Standings, by_case_records: dict
) -> dict[str, str]:
    """cases/<id>.html for every case, and its folder's published files beside it (cases/<id>/<file>)."""
    claims_of, case_page, out = case_claims(p), env.get_template("case.html.j2"), {}
    grid_files = {g.target: g.file for g in common["grids"]}
    by_case: dict[str, list] = {}
    for row in every:
        by_case.setdefault(row.case, []).append(row)
    for cd in p.cases:
        scripts = [(cd.script(variant).name, cd.script(variant).read_text("utf-8")) for variant in cd.variants()]
        out[f"cases/{cd.case.id}.html"] = case_page.render(
            **common,
            cd=cd,
            case=cd.case,
            source=source_of(cd),
            scripts=scripts,
            rows=by_case.get(cd.case.id, []),
            claims=claims_of.get(cd.case.id, []),
            grid_files=grid_files,
            facts=case_facts(
                cd,
                found.get(cd.case.id, {}),
                {t: by_case_records[t].get(cd.case.id, {}) for t in p.histories},
                p.machines,
                p.descriptions,
                set(p.histories),
                {t: runs[cd.case.id] for t, runs in p.last_runs.items() if cd.case.id in runs},
            ),
        )
        for path in published_files(cd):
            out[f"cases/{cd.case.id}/{path.name}"] = path.read_text("utf-8")
    return out


def upstream_page(env: jinja2.Environment, common: dict, p: Published, every: Standings) -> str:
    """The upstream cases' standings, per target (per machine where the verdict depends on it)."""
    found = [s for cd in p.cases if cd.case.source == "upstream" for s in flat(every.get(cd.case.id, {}))]
    found.sort(key=lambda s: s.case.case.id)  # stable: targets in matrix.yaml's order, then machines
    flagged = [s for s in found if s.disagreement()]
    filters = [
        ("target", "target", list(dict.fromkeys(s.target for s in found))),
        ("state", "issue state", sorted({s.case.case.issue_state or "" for s in found})),
        ("area", "area", sorted({s.case.case.area for s in found if s.case.case.area})),
        ("flag", "flag", ["flagged", "none"]),
    ]
    facts = {cd.case.id: flag_facts(cd, p) for cd in p.cases if cd.case.source == "upstream"}
    filters.append(("link", "linked as", sorted({f.link for f in facts.values()})))
    return env.get_template("upstream.html.j2").render(
        **common,
        standings=found,
        filters=filters,
        case_count=len({s.case.case.id for s in found}),
        flag_facts=facts,
        issues={s.case.case.id: issue_status.issue_links(s.case) for s in found},
        recorded=sorted({rel for every in p.histories.values() for rel in every}, key=release_key),
        closed_flagged=len({s.case.case.id for s in flagged if s.case.case.issue_state == "closed"}),
        open_flagged=len({s.case.case.id for s in flagged if s.case.case.issue_state != "closed"}),
    )


def write(out: Path, site: dict[str, str]) -> list[Path]:
    """Every file under out, and a gzip copy beside each big page or data file (data.compressed)."""
    written = []
    for rel, text in site.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        written.append(path)
        if (packed := compressed(rel, data)) is not None:
            path.with_name(path.name + ".gz").write_bytes(packed)
            written.append(path.with_name(path.name + ".gz"))
    return written


def build(
    root: Path, out: Path, matrix: Matrix, store: Store, stamp: BuildStamp | None = None, site_url: str | None = None
) -> list[Path]:
    """`reprokit site`: every page from the store (matrix.yaml's targets) and root's cases, written under out; the
    footer names root's git commit unless `stamp` says otherwise; the feed's links start with `site_url` if given."""
    site_address(site_url)  # a malformed address is refused before anything is read
    loaded = Loaded()
    for name in matrix.targets:
        loaded.add(store.load(name, outputs=False))
    published = gather(root, matrix, loaded)
    return write(
        out,
        pages(published, history_rows(loaded, [], None), stamp or from_git(root), site_url, current_identities(loaded)),
    )
