"""The compatibility site (`reprokit site`): rendered in-process it escapes what runs wrote (in its pages, its JSON, its
Atom feed and its addresses), is byte-identical from the same store and commit, publishes every record as
`history --json` gives it and the verdict changes between releases; opened in a real browser (headless Chromium through
Playwright) it shows the repository's recorded figures, restores a shared view from its address, finds a case by its
issue number, opens a grid permalink on its cell, fits a 390 px screen, and axe-core finds nothing to report."""

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
from reprokit.model import case_identity, corpus
from reprokit.model.attribution import compile_rate
from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.schema import InputError
from reprokit.model.verdict import MEANING, Verdict, rate_text, reproduce_rate
from reprokit.publish import render
from reprokit.publish.issue_status import CaseStanding
from reprokit.publish.pages import index_page, sweep_report
from reprokit.publish.site import website
from reprokit.publish.site.case import upstream_refusal
from reprokit.publish.site.feed import site_address
from reprokit.publish.site.rows import slug
from reprokit.publish.site.stamp import BuildStamp, from_git
from reprokit.publish.site.standing import standing_line
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import (
    build_split,
    current,
    current_identities,
    history_rows,
    know_content,
    releases,
    superseded,
)
from reprokit.tracker.judging.not_a_bug import screen
from support import record

ROOT = Path(__file__).resolve().parents[1]
CASE = "custom-op-unregistered-gemm"
HOSTILE = "backend='inductor' raised:\n<script>alert(1)</script> & <img src=x onerror=alert(2)>\x1b[31m\x00 \"'"
HOSTILE_RELEASE = '9.9.9"><svg onload=alert(6)>'
STAMP = BuildStamp("0123456789abcdef0123456789abcdef01234567", "2026-12-01T12:00:00+00:00")


def committed(target: str | None = None):
    """The committed store, knowing the cases' content now (its records of earlier content are superseded)."""
    return know_content(Store(ROOT / "results").load(target), corpus.discover(ROOT / "cases"))


def read_site(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def site_of(root: Path, stamp: BuildStamp = STAMP, site_url: str | None = None) -> dict[str, str]:
    """Every file of the site rendered in-process from root's store, cases and matrix.yaml."""
    loaded = Store(root / "results").load()
    published = render.gather(root, load_root_matrix(root), loaded)  # the store now knows the cases' content
    return website.pages(published, history_rows(loaded, [], None), stamp, site_url, current_identities(loaded))


def hostile_root(tmp_path: Path) -> Path:
    """A repository of one case whose case.yaml, script and recorded runs (three releases, one of them named to break
    out of a path and an attribute) all carry markup."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    repro = root / "cases" / CASE / "repro.py"
    repro.write_text(repro.read_text() + "# </code></pre><script>alert('script')</script>\n")
    yaml_file = root / "cases" / CASE / "case.yaml"
    yaml_file.write_text(
        yaml_file.read_text().replace("title: A custom op", "title: </script><script>alert(5)</script> A custom op")
    )
    bad = dict(
        verdict="fails-differently",
        exception="torch._dynamo.exc.Unsupported",
        message=HOSTILE,
        stage="dynamo",
        status="fail",
        why='<b onmouseover="x">',
        run_id='r2"</script><script>alert(4)</script>',
    )
    now = case_identity.content_hash(root / "cases" / CASE)  # records of the case as it is (a hashless one is history)
    Store(root / "results").merge(
        [
            record(case=CASE, torch="2.12.1+cpu", verdict="does-not-reproduce", status="pass", case_hash=now),
            record(case=CASE, variant="fixed", torch="2.12.1+cpu", verdict="fix-works", status="pass", case_hash=now),
            record(case=CASE, torch="2.13.0+cpu", recorded_at="2026-12-01T00:00:00Z", case_hash=now, **bad),
            record(
                case=CASE,
                variant="fixed",
                torch="2.13.0+cpu",
                verdict="fix-works",
                status="pass",
                why="ran and exited 0",
                case_hash=now,
            ),
        ]
    )
    return root


def test_site_escapes_what_cases_and_runs_wrote(tmp_path):
    root = hostile_root(tmp_path)
    site = site_of(root)
    page = site[f"cases/{CASE}.html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(&#39;script&#39;)&lt;/script&gt;" in page
    assert {"grid-cpu.html", "changes-2.13.0.html", "upstream.html", "feed.xml", "results.json"} <= set(site)
    for name, text in site.items():
        if name.endswith((".html", ".xml", ".json")):
            for raw in ("<script>alert", "<img src=x", "<b onmouseover", "<svg onload", "</script><script>"):
                assert raw not in text, (name, raw)
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(5)" in site["grid-cpu.html"]  # the search's JSON
    assert '<span class="verdict v-fails-differently">fails-differently</span>' in site["changes-2.13.0.html"]
    # a release that is not a torch build never reaches a page: the store refuses the record (it names files too)
    with pytest.raises(ValueError, match="torch"):
        record(case=CASE, torch=HOSTILE_RELEASE)
    assert slug("../../x") == "..-..-x" and "/" not in slug("a/b")


def test_the_feed_and_the_json_carry_what_runs_wrote_as_data(tmp_path):
    site = site_of(hostile_root(tmp_path))
    records = json.loads(site["results.json"])
    assert 'r2"</script><script>alert(4)</script>' in {r["run_id"] for r in records}
    feed = ET.fromstring(site["feed.xml"].encode())  # well-formed although the message holds NUL and ESC
    atom = "{http://www.w3.org/2005/Atom}"
    entries = {e.find(f"{atom}title").text.split(":")[0]: e for e in feed.findall(f"{atom}entry")}
    assert set(entries) == {"cpu, torch 2.13.0"}  # the one change: 2.12.1 -> 2.13.0
    summary = entries["cpu, torch 2.13.0"].find(f"{atom}summary")
    assert list(summary) == [] and "<script>alert(1)</script> & <img src=x onerror=alert(2)>" in summary.text
    feedparser = pytest.importorskip("feedparser")
    parsed = feedparser.parse(site["feed.xml"])
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert f"grid-cpu.html#{CASE}/cpu/2.13.0" in [e.link for e in parsed.entries]


def test_a_nightly_has_its_what_changed_page_after_the_releases(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    now = case_identity.content_hash(root / "cases" / CASE)
    Store(root / "results").merge(
        [
            record(case=CASE, torch="2.13.0+cpu", verdict="does-not-reproduce", status="pass", case_hash=now),
            record(
                case=CASE,
                torch="2.16.0.dev20261201+cpu",
                verdict="reproduces",
                status="fail",
                case_hash=now,
                exception="torch._dynamo.exc.Unsupported",
                message="fake kernel missing",
            ),
        ]
    )
    site = site_of(root)
    page = site["changes-2.16.0.dev20261201.html"]
    assert '<span class="tag">nightly</span>' in page and '<tr class="k-regressed" data-kind="regressed">' in page
    overview = site["changes.html"]
    assert overview.index("changes-2.16.0.dev20261201.html") < overview.index("changes-2.13.0.html")  # newest first
    assert '<th scope="col" data-key="r-2.16.0.dev20261201">2.16.0.dev20261201' in site["grid-cpu.html"]


def test_site_is_the_same_bytes_from_the_same_store(tmp_path):
    matrix, store = load_root_matrix(ROOT), Store(ROOT / "results")
    first, second = (website.build(ROOT, tmp_path / folder, matrix, store) for folder in ("a", "b"))
    assert len(first) == len(second) > 5
    assert read_site(tmp_path / "a") == read_site(tmp_path / "b")


def test_the_footer_names_the_commit_and_its_date_never_the_clock(tmp_path):
    stamp = from_git(ROOT)
    if shutil.which("git") and (ROOT / ".git").exists():
        done = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%H %cI"], capture_output=True, text=True, check=True
        )
        assert f"{stamp.commit} {stamp.date}" == done.stdout.strip()
    assert from_git(tmp_path) == BuildStamp()  # no repository: "unknown"
    page = site_of(hostile_root(tmp_path), from_git(tmp_path))["index.html"]
    assert 'Built from commit <code title="unknown">unknown</code> of unknown.' in page
    page = site_of(hostile_root(tmp_path / "again"))["matrix.html"]
    assert f'<code title="{STAMP.commit}">{STAMP.commit[:12]}</code> of {STAMP.date}' in page
    assert '<a href="results.json">' in page and '<a href="feed.xml">' in page


def test_site_index_shows_the_markdown_reports_figures():
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    published = render.gather(ROOT, matrix, loaded)
    site = website.pages(published, [], STAMP)
    index = site["index.html"]
    markdown = index_page.render_index(
        published.views,
        {c.case.id: c for c in published.cases},
        published.descriptions,
        published.claims,
        published.sweeps,
    )
    cases = {c.case.id: c.case for c in published.cases}
    assert published.views
    for name, view in published.views.items():
        rate, compile_figure = rate_text(*reproduce_rate(view.records)), rate_text(*compile_rate(view.records, cases))
        assert rate in index and f"**{rate}**" in markdown and f"**{compile_figure}**" in markdown
        # one sentence names them, each with its release: the compile rate beside the article's, the any-reason rate
        # and the sweep's figure
        sentence = re.search(rf'<li data-target="{name}">(.*?)</li>', index, re.S).group(1)
        assert (
            f'torch {view.release}: the torch.compile failure rate is <strong class="compile">{compile_figure}'
            f'</strong> of the repros that ran, beside the article\'s 63.2%; for any reason <span class="any">'
            f"{rate}</span>"
        ) in sentence
        if name in published.sweeps:
            sweep = published.sweeps[name]
            assert f'(torch {sweep.release}): <span class="sweep">{sweep_report.summary_rows(sweep)[1][1]}' in sentence
        # the grid's rates per release: the same functions over each release's records, the report's on its own
        grid = site[f"grid-{name}.html"]
        for release, records in published.histories[name].items():
            for kind, figure in (("compile", compile_rate(records, cases)), ("any", reproduce_rate(records))):
                row = re.search(rf'<tr data-rate="{kind}">(.*?)</tr>', grid).group(1)
                assert f'<td class="rate" data-release="{release}">{rate_text(*figure)}</td>' in row
        assert f'data-release="{view.release}">{compile_figure}</td>' in grid


def test_the_glossary_defines_every_verdict_and_every_legend_links_it(tmp_path):
    site = site_of(hostile_root(tmp_path))
    glossary = site["glossary.html"]
    assert len(Verdict) == 8
    for verdict in Verdict:
        entry = re.search(rf'<dt id="{verdict}">(.*?)</dd>', glossary, re.S)
        assert entry, verdict
        assert MEANING[verdict][1:] in html.unescape(entry.group(1))
        assert "Counts toward:" in entry.group(1)
    counted = re.search(r'<dt id="reproduces">(.*?)</dd>', glossary, re.S).group(1)
    assert "numerator of the any-reason rate" in counted and "torch.compile failure rate" in counted
    assert "no rate: a skip is not a result" in re.search(r'<dt id="skipped">(.*?)</dd>', glossary, re.S).group(1)
    pages = [name for name in site if name.endswith(".html")]
    for name in pages:
        legends = re.findall(r'<p class="legend">(.*?)</p>', site[name], re.S)
        assert legends and all("glossary.html" in legend for legend in legends), name


@pytest.mark.parametrize(
    "verdicts, line",
    [
        ([("2.8.0", "reproduces"), ("2.9.1", "reproduces"), ("2.10.0", "does-not-reproduce")], "fixed in 2.10.0"),
        ([("2.12.1", "does-not-reproduce"), ("2.13.0", "reproduces"), ("2.14.1", "reproduces")], "regressed in 2.13.0"),
        ([("2.8.0", "reproduces"), ("2.15.0", "reproduces")], "reproduces on every recorded release (2.8.0–2.15.0)"),
        ([("2.11.0", "does-not-reproduce")], "does not reproduce (2.11.0)"),
        (
            [("2.8.0", "skipped"), ("2.14.1", "reproduces"), ("2.15.0", "reproduces")],
            "reproduces on 2.14.1–2.15.0 (2 of 3 recorded releases)",
        ),
        (
            [("2.8.0", "reproduces"), ("2.9.1", "does-not-reproduce"), ("2.10.0", "timeout")],
            "fixed in 2.9.1; timeout on 2.10.0",
        ),
        ([("2.11.0", "skipped")], "skipped (2.11.0)"),
    ],
)
def test_a_standing_says_where_a_case_changed(verdicts, line):
    cd = corpus.discover(ROOT / "cases")[0]
    assert standing_line(CaseStanding(cd, "cpu", [(rel, Verdict(v)) for rel, v in verdicts])) == line


# ---------------------------------------------------------------- data for machines and the new pages, in-process

SITE_ADDRESS = "https://example.org/corpus/"


@pytest.fixture(scope="module")
def repository_site() -> dict[str, str]:
    return site_of(ROOT, site_url=SITE_ADDRESS)


def test_results_json_is_history_json_with_the_case_hash_and_fits_the_records_schema(repository_site):
    jsonschema = pytest.importorskip("jsonschema")
    published = json.loads(repository_site["results.json"])
    record_schema = Record.model_json_schema()  # the records' own schema, cut to the fields history --json gives
    fields = set(published[0]) - {"current"}
    assert fields <= set(record_schema["properties"])
    jsonschema.validate(
        published,
        {
            "type": "array",
            "$defs": record_schema["$defs"],
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": sorted(fields),
                "properties": {f: record_schema["properties"][f] for f in fields} | {"current": {"type": "boolean"}},
            },
        },
    )
    schema = json.loads(repository_site["results.schema.json"])
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(published, schema)
    history = subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(ROOT), "history", "--json"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )
    assert [
        {k: v for k, v in r.items() if k not in ("suite", "case_hash", "current", "on_other_machines")}
        for r in published
    ] == json.loads(history.stdout)
    assert "suite" in schema["items"]["required"] and {r["suite"] for r in published} <= {"cases", "sweep"}
    assert {r["suite"] for r in published} == {r.suite for r in Store(ROOT / "results").load().records}
    stored = Store(ROOT / "results").load().records
    hashes = {(r.target, r.torch, r.device, r.case, r.variant, r.dtype): r.case_hash for r in stored}
    machines = {(r.target, r.torch, r.device, r.case, r.variant, r.dtype): r.on_other_machines for r in stored}
    assert [r["on_other_machines"] for r in published] == [
        machines[(r["target"], r["torch"], r["device"], r["case"], r["variant"], r["dtype"])] for r in published
    ]
    shown = current_identities(committed())  # what the pages use: current; the rest is history
    shown = {(i.target, i.torch, i.device, i.case, i.variant, i.dtype) for i in shown}
    assert [r["current"] for r in published] == [
        (r["target"], r["torch"], r["device"], r["case"], r["variant"], r["dtype"]) in shown for r in published
    ]
    assert not all(r["current"] for r in published) and any(r["current"] for r in published)
    assert len(published) == len(hashes)
    assert [r["case_hash"] for r in published] == [
        hashes[(r["target"], r["torch"], r["device"], r["case"], r["variant"], r["dtype"])] for r in published
    ]


def recorded_changes(target: str, old: str, new: str) -> set[tuple[str, str, str]]:
    """(case/variant@dtype, before, after) between two recorded releases, read from the store (newest record wins),
    leaving out a run whose verdict another machine did not share on either release, a flaky one and a skip on either
    side (never a change)."""
    newest: dict[str, dict[str, Record]] = {old: {}, new: {}}
    loaded = committed(target)
    for rec in loaded.records:
        release = rec.torch.split("+")[0]
        if (
            release in newest
            and not superseded(rec, loaded.content)
            and (rec.key not in newest[release] or newest[release][rec.key].recorded_at <= rec.recorded_at)
        ):
            newest[release][rec.key] = rec
    cases = {c.case.id for c in corpus.discover(ROOT / "cases")}
    by_machine = {
        r.key for rel in (old, new) for r in releases(loaded, target, "cases").get(rel, []) if r.machine_dependent
    }
    return {
        (key, str(rec.verdict), str(newest[new][key].verdict))
        for key, rec in newest[old].items()
        if key in newest[new]
        and rec.verdict != newest[new][key].verdict
        and rec.case in cases
        and rec.verdict is not Verdict.FLAKY
        and newest[new][key].verdict is not Verdict.FLAKY
        and rec.verdict.ran
        and newest[new][key].verdict.ran  # a run that newly ran (or no longer did): no change
        and key not in by_machine
    }


def test_the_atom_feed_lists_the_changes_between_two_recorded_releases(repository_site):
    feedparser = pytest.importorskip("feedparser")
    feed = feedparser.parse(repository_site["feed.xml"])
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.feed.title.startswith("torch.compile repro corpus")
    cpu = list(releases(committed("cpu"), "cpu", "cases"))
    assert len(cpu) >= 2
    found = 0
    for old, new in zip(cpu, cpu[1:], strict=False):
        title = re.compile(
            rf"^cpu, torch {re.escape(new)}: (\S+) (?:fixed|regressed|changed): (\S+) on "
            rf"{re.escape(old)} -> (\S+)$"
        )
        listed = {m.groups() for e in feed.entries if (m := title.match(e.title))}
        assert listed == recorded_changes("cpu", old, new), (old, new)
        found += len(listed)
    assert found > 0
    assert all(e.updated_parsed and e.id.startswith("urn:uuid:") for e in feed.entries)
    # newest release first, and dated so: a reader sorting by date lists them as the releases go
    release = [re.match(r"^\S+, torch (\S+):", e.title).group(1) for e in feed.entries]
    assert [release_key(r) for r in release] == sorted((release_key(r) for r in release), reverse=True)
    dated = list(zip(release, feed.entries, strict=True))
    for (rel_a, a), (rel_b, b) in zip(dated, dated[1:], strict=False):
        assert (a.updated_parsed > b.updated_parsed) if rel_a != rel_b else (a.updated_parsed == b.updated_parsed)
    assert all(e.link.startswith(f"{SITE_ADDRESS}grid-") for e in feed.entries)  # absolute, from the site's address
    assert (
        f'<link rel="self" type="application/atom+xml" href="{SITE_ADDRESS}feed.xml"/>' in repository_site["feed.xml"]
    )
    with pytest.raises(InputError, match="--site-url"):
        site_address("javascript:alert(1)")


def test_changes_pages_list_fixed_and_regressed_first(repository_site):
    pages = [name for name in repository_site if name.startswith("changes-")]
    assert len(pages) == len(
        {rel for t in ("cpu", "h100") for rel in releases(Store(ROOT / "results").load(t), t, "cases")}
    )
    order = ["fixed", "regressed", "changed"]
    kinds_seen = set()
    for name in pages:
        kinds = re.findall(r'<tr class="k-\w+" data-kind="(\w+)">', repository_site[name])
        assert kinds == sorted(kinds, key=order.index), name
        kinds_seen |= set(kinds)
    assert "fixed" in kinds_seen


def test_the_grid_has_a_cell_per_case_and_release_with_the_recorded_verdict(repository_site):
    grid = repository_site["grid-cpu.html"]
    assert len(grid.encode()) < min(300_000, len(repository_site["matrix.html"].encode()) // 2)
    cases = {c.case.id for c in corpus.discover(ROOT / "cases")}
    for release, records in releases(committed("cpu"), "cpu", "cases").items():
        for rec in records:
            if rec.variant == "repro" and rec.case in cases:
                cell = re.search(rf'<td id="{re.escape(f"{rec.case}/cpu/{release}")}"[^>]*>(.*?)</td>', grid)
                assert cell, (rec.case, release)
                word = "machine-dependent" if rec.machine_dependent else rec.verdict  # no one machine's word
                assert f'<span class="verdict v-{word}">' in cell.group(1)
                tip = re.search(r'role="tooltip">(.*?)</span>', cell.group(1)).group(1)
                assert (
                    f"{rec.dtype}: {rec.verdict}" in tip
                    or tip.startswith(str(rec.verdict))
                    or (rec.machine_dependent and tip.startswith(f"machine-dependent. {rec.verdict} on "))
                    or f"+{rec.torch.partition('+')[2]}: {rec.verdict}" in tip
                )  # builds that disagree: each named
    options = re.search(r'<select name="release">(.*?)</select>', repository_site["matrix.html"]).group(1)
    shown = re.findall(r'<option value="([^"]+)">', options)
    assert shown[1:] == sorted(shown[1:], key=lambda v: tuple(int(x) for x in v.split(".")))  # 2.8.0 before 2.10.0


def test_a_grid_marks_each_cell_whose_verdict_changed_from_the_previous_release(repository_site):
    cases = {c.case.id for c in corpus.discover(ROOT / "cases")}
    for target in ("cpu", "h100"):
        verdicts: dict[str, list[tuple[str, dict[str, str]]]] = defaultdict(list)  # case -> [(release, dtype->v)]
        for release, records in releases(committed(target), target, "cases").items():
            mine: dict[str, dict[str, str]] = defaultdict(dict)
            for rec in records:
                if rec.variant == "repro" and rec.case in cases:
                    mine[rec.case].setdefault(rec.dtype, {})  # the case has a cell on this release
                    if not rec.machine_dependent:  # another machine's verdict differs: never a change
                        mine[rec.case][rec.dtype] = str(rec.verdict)
            for case_id, by_dtype in mine.items():
                verdicts[case_id].append((release, {d: v for d, v in by_dtype.items() if v}))
        undecided = {"skipped", "flaky"}  # a run that newly ran (or no longer did), a flaky one: never a change
        expected = {
            f"{case_id}/{target}/{rel}"
            for case_id, seen in verdicts.items()
            for (_, was), (rel, now) in zip(seen, seen[1:], strict=False)
            if any(d in was and was[d] != v and not {was[d], v} & undecided for d, v in now.items())
        }
        marked = set(re.findall(r'<td id="([^"]+)" class="v-[\w-]+ changed"', repository_site[f"grid-{target}.html"]))
        assert marked == expected, target
        assert target != "cpu" or marked


def test_case_pages_show_the_upstream_command_only_where_upstream_would_file(repository_site):
    cds = corpus.discover(ROOT / "cases")
    refused = 0
    for cd in cds:
        # upstream's first screen, decided before any run: documented behaviour (publish/ cannot import contrib/)
        assert bool(upstream_refusal(cd.case)) == bool(cd.case.documented), cd.case.id
        if cd.case.documented:
            assert screen(cd.case, None, "", None, False, "").screen == "documented behaviour"
        page = repository_site[f"cases/{cd.case.id}.html"]
        if upstream_refusal(cd.case):
            refused += 1
            assert "refuses this case" in page and f"reprokit upstream {cd.case.id}</code></pre>" not in page
        else:
            assert f'<pre class="command" tabindex="0"><code>reprokit upstream {cd.case.id}</code></pre>' in page
        # the install line comes from a run that ran; a case none of whose current runs ran says so instead
        assert f'<a href="{cd.case.id}/repro.py">' in page
        assert "pip install torch==" in page or "No current record of the repro has run" in page, cd.case.id
        assert repository_site[f"cases/{cd.case.id}/repro.py"] == (cd.path / "repro.py").read_text()
    assert 0 < refused < len(cds)
    flagged = [cd for cd in cds if cd.case.source == "upstream" and cd.case.issue_state == "closed"]
    assert any("closed upstream, still reproduces on" in repository_site[f"cases/{cd.case.id}.html"] for cd in flagged)
    assert "closed upstream, still reproduces on" in repository_site["upstream.html"]


# ---------------------------------------------------------------- in a real browser


def browser_or_skip() -> str:
    """The Chromium binary, with Playwright importable; skipped where either is absent, except on CI."""
    found = os.environ.get("REPROKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    missing = [what for what, ok in (("chromium", found), ("playwright", _has_playwright())) if not ok]
    if missing:
        _absent(f"{' and '.join(missing)} not installed (apt-get install chromium; pip install -e .[test])")
    return found


def axe_or_skip() -> Path:
    """axe.min.js of the npm package axe-core: $REPROKIT_AXE, else where .ci/run installs it."""
    found = Path(
        os.environ.get("REPROKIT_AXE")
        or Path.home() / ".cache" / "reprokit" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
    )
    if not found.is_file():
        _absent(
            f"axe-core not found at {found} (npm install --prefix ~/.cache/reprokit/axe axe-core, or set "
            "REPROKIT_AXE to its axe.min.js)"
        )
    return found


def _absent(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser test: {reason}")
    pytest.skip(reason)


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_a_missing_browser_skips_the_browser_test_except_on_ci(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("REPROKIT_CHROMIUM", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(outcome, match="chromium"):
        browser_or_skip()


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_a_missing_axe_skips_the_browser_test_except_on_ci(monkeypatch, tmp_path, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("REPROKIT_AXE", str(tmp_path / "absent.js"))
    with pytest.raises(outcome, match="axe-core"):
        axe_or_skip()


def expected_rows(category: str | None = None, target: str | None = None, current_only: bool = False) -> int:
    """Matrix rows (case and dtype per target and release) from the store itself, not from the site's code."""
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    cases = {c.case.id: c.case for c in corpus.discover(ROOT / "cases")}
    keys = set()
    for name, t in matrix.targets.items():
        view = current(loaded, name, "cases", t.pins.torch)
        for release, records in releases(loaded, name, "cases").items():
            if (target and name != target) or (current_only and release != view.release):
                continue
            keys |= {
                (name, release, r.case, r.dtype)
                for r in records
                if r.case in cases and (category is None or cases[r.case].category == category)
            }
    # where builds of a release disagree on the current content, a row per build
    known = know_content(loaded, corpus.discover(ROOT / "cases"))
    builds: dict[tuple, int] = {}
    for name in matrix.targets:
        for (release, key), recs in build_split(known, name, "cases").items():
            row = (name, release, key.split("/")[0], key.rsplit("@", 1)[1])
            builds[row] = max(builds.get(row, 1), len(recs))
    # a case whose runs on a target are all history (no current record): one row, its last run's, marked history
    history = set()
    for name in matrix.targets:
        now = {
            r.case
            for r in known.records
            if r.target == name and r.suite == "cases" and not superseded(r, known.content)
        }
        if current_only or (target and name != target) or not now:
            continue
        history |= {
            (name, r.case)
            for r in known.records
            if r.target == name
            and r.suite == "cases"
            and r.verdict.ran
            and r.case in cases
            and r.case not in now
            and (category is None or cases[r.case].category == category)
        }
    return len(keys) + sum(n - 1 for row, n in builds.items() if row in keys) + len(history)


BUILT_SITES: list[Path] = []  # the one build of this test process (test_site_answers, _where_asked import the fixture)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """The repository's site, built by the command line as `nox -s site` builds it, from a folder of the checkout.
    Built once per test process: each module importing this fixture has its own copy of it, and the tests only read
    the site, so the modules share the first build instead of building it again each."""
    browser_or_skip()
    if BUILT_SITES:
        return BUILT_SITES[0]
    out = tmp_path_factory.mktemp("site") / "site"
    # from a folder inside the checkout, without --root: the repository is found from the working directory up
    subprocess.run(
        [sys.executable, "-m", "reprokit", "site", "--out", str(out), "--site-url", SITE_ADDRESS],
        check=True,
        cwd=ROOT / "tools" / "reprokit",
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )
    BUILT_SITES.append(out)
    return out


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(built_site):
    """The built site served on the loopback (as Pages serves it: http, so nothing runs into file://'s rules)."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(built_site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(built_site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=browser_or_skip(), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A page of 1400 x 1000 px that fails its test on any console error, page error, failed request or answer of
    4xx/5xx. A request the browser itself aborts (net::ERR_ABORTED: the test navigated on while the favicon of the page
    it left was still loading) is not the site's failure; a missing file still is, as its 404."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(20_000)
    errors = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on(
        "requestfailed",
        lambda req: None if req.failure == "net::ERR_ABORTED" else errors.append(f"failed {req.url}: {req.failure}"),
    )
    page.on("response", lambda resp: errors.append(f"{resp.status} {resp.url}") if resp.status >= 400 else None)
    yield page
    page.close()
    assert not errors, errors


def visible_ids(page) -> list[str]:
    return page.eval_on_selector_all(
        "table[data-filterable] tbody tr",
        "rows => rows.filter(r => !r.hidden).map(r => r.id || r.getAttribute('data-case'))",
    )


@pytest.mark.e2e
def test_the_site_in_a_browser(site_url, page):
    case_folders = [p for p in (ROOT / "cases").iterdir() if p.is_dir()]
    page.goto(f"{site_url}/index.html")
    assert page.inner_text("#case-count") == str(len(case_folders))
    assert page.locator("#cases-table tbody tr").count() == len(case_folders)

    page.goto(f"{site_url}/matrix.html")
    assert page.locator("#matrix tbody tr:visible").count() == expected_rows()
    page.select_option("select[name=category]", "ddp")
    visible = page.locator("#matrix tbody tr:visible")
    assert visible.count() == expected_rows(category="ddp") > 0
    assert set(visible.locator("td:nth-child(2)").all_inner_texts()) == {"ddp"}
    assert page.inner_text("#shown").startswith(f"{visible.count()} of ")
    page.click("#matrix thead th:nth-child(1) button")  # sort by case, then descending
    page.click("#matrix thead th:nth-child(1) button")
    cases_shown = visible.locator("td:nth-child(1)").all_inner_texts()
    assert cases_shown == sorted(cases_shown, reverse=True)
    page.click("#matrix thead th:nth-child(7) button")  # the repro's verdict: in the legend's order
    ranks = visible.locator("td:nth-child(7)").evaluate_all("cells => cells.map(c => c.getAttribute('data-sort'))")
    assert ranks == sorted(ranks)

    page.goto(f"{site_url}/matrix.html?target=cpu&release=current")
    assert page.locator("#matrix tbody tr:visible").count() == expected_rows(target="cpu", current_only=True)

    page.goto(f"{site_url}/cases/{CASE}.html")
    recorded = defaultdict(dict)
    for rel, records in releases(Store(ROOT / "results").load(target="cpu"), "cpu", "cases").items():
        for rec in records:
            if rec.case == CASE:
                recorded[(rel, rec.dtype)][rec.variant] = rec.verdict
    assert recorded, f"no recorded cpu run of {CASE}"
    for (rel, dtype), variants in recorded.items():
        for variant, verdict in variants.items():
            cell = page.locator(
                f'#verdicts-table tr[data-target="cpu"][data-release="{rel}"]'
                f'[data-dtype="{dtype}"] td[data-variant="{variant}"]'
            )
            assert cell.inner_text().startswith(str(verdict))
            assert cell.evaluate("c => getComputedStyle(c, '::before').maskImage").startswith('url("data:image/svg')
    assert "refuses this case" in page.inner_text("#upstream + p")  # the case.yaml says `documented:`
    assert not re.search("[\U0001f300-\U0001faff\u2600-\u27bf]", page.inner_text("body"))  # no emoji anywhere


def repro_verdicts(target: str) -> dict[str, dict[str, set[str]]]:
    """release -> case -> the repro's verdicts over its dtypes and the machines it ran on (a machine-dependent
    verdict is each machine's), from the store itself (corpus cases only)."""
    cases = {c.case.id for c in corpus.discover(ROOT / "cases")}
    out: dict[str, dict[str, set[str]]] = {}
    for release, records in releases(Store(ROOT / "results").load(target, "cases"), target, "cases").items():
        for rec in records:
            if rec.variant == "repro" and rec.case in cases:
                out.setdefault(release, {}).setdefault(rec.case, set()).update(
                    {str(rec.verdict), *(rec.on_other_machines or {}).values()}
                )
    return out


def box_of(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


@pytest.mark.e2e
def test_the_grid_fits_1440_px_and_its_cells_work_by_keyboard(site_url, page):
    """One load of the grid: every release in view at 1440 px, the skip link, the verdict filter on an old release,
    a tooltip inside the window that Escape closes, then a permalink opening on its cell."""
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{site_url}/grid-cpu.html")
    by_release = repro_verdicts("cpu")
    headers = page.locator("#grid thead th[data-key^='r-']")
    assert headers.count() == len(by_release) > 2
    for n in range(headers.count()):
        box = headers.nth(n).bounding_box()
        assert 0 <= box["x"] and box["x"] + box["width"] <= 1440, headers.nth(n).inner_text()
    assert page.locator("#grid").evaluate(
        "t => { const s = t.closest('.scroll'); return s.scrollWidth <= s.clientWidth }"
    )
    assert page.locator("#rates-table thead th").count() == len(by_release) + 1 and page.locator("svg.trend").count()

    page.keyboard.press("Tab")  # the first stop is the skip link, and it leads into the grid
    assert (
        page.evaluate("document.activeElement.className + ' ' + document.activeElement.getAttribute('href')")
        == "skip #grid"
    )
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("!!document.activeElement.closest('#grid')")

    oldest = list(by_release)[0]  # the verdict filter reads any release, not only the current one
    page.select_option("select[name=on]", oldest)
    page.select_option("select[name=verdict]", "reproduces")
    assert set(visible_ids(page)) == {c for c, v in by_release[oldest].items() if "reproduces" in v} != set()
    assert f"on={oldest}" in page.url and "verdict=reproduces" in page.url
    page.click("#filters button[type=reset]")
    page.wait_for_timeout(100)

    corner = "#grid tbody tr:last-child td:last-child"  # the last row's last cell: its tooltip must not be cut off
    link, tip = page.locator(f"{corner} a"), page.locator(f"{corner} .tip")
    assert link.get_attribute("aria-describedby") == tip.get_attribute("id")
    link.focus()
    box = tip.bounding_box()
    assert box["width"] > 100 and 0 <= box["x"] and box["x"] + box["width"] <= 1440
    assert 0 <= box["y"] and box["y"] + box["height"] <= 900
    page.keyboard.press("Escape")
    assert tip.bounding_box()["width"] <= 1  # closed, the focus still on its cell
    assert page.evaluate("document.activeElement.closest('td') === document.querySelector('" + corner + "')")

    anchor = f"{CASE}/cpu/2.13.0"
    page.goto(f"{site_url}/grid-cpu.html#{anchor}")
    page.wait_for_timeout(300)
    cell = page.locator(f'td[id="{anchor}"]')
    assert cell.get_attribute("class").startswith("v-")
    box = cell.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= 900 and 0 <= box["x"] and box["x"] + box["width"] <= 1440
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    on_top = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('td') && document.elementFromPoint(x, y).closest('td').id",
        centre,
    )
    assert on_top == anchor  # in view, not under the sticky case column or header


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["matrix.html", "grid-cpu.html"])
def test_a_filtered_view_reloads_from_its_address_to_the_same_rows(site_url, browser, page, name):
    page.goto(f"{site_url}/{name}")
    page.select_option("select[name=category]", "dynamic-shape")
    page.fill("input[name=q]", "dynamic")
    page.click("thead th:nth-child(1) button")
    page.click("thead th:nth-child(1) button")
    shown = visible_ids(page)
    assert 0 < len(shown) < page.locator("table[data-filterable] tbody tr").count()
    cases = [i.split("/")[0] for i in shown]
    assert cases == sorted(cases, reverse=True)
    url = page.url
    assert "category=dynamic-shape" in url and "q=dynamic" in url and "sort=case" in url and "order=desc" in url
    again = browser.new_page(viewport={"width": 1400, "height": 1000})
    again.goto(url)
    assert visible_ids(again) == shown
    assert again.input_value("input[name=q]") == "dynamic"
    again.close()


def fixed_on_cpu() -> tuple[str, str]:
    """A case whose cpu repro reproduced and then stopped, for good, from a known release: (case, that release)."""
    by_release = repro_verdicts("cpu")
    seen: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for release, cases in by_release.items():
        for case_id, verdicts in cases.items():
            decisive = verdicts & {"reproduces", "does-not-reproduce"}
            if len(decisive) == 1:
                seen[case_id].append((release, decisive.pop()))
    for case_id, story in sorted(seen.items()):
        words = [v for _, v in story]
        first_good = words.index("does-not-reproduce") if "does-not-reproduce" in words else 0
        if (
            first_good
            and set(words[:first_good]) == {"reproduces"}
            and set(words[first_good:]) == {"does-not-reproduce"}
            and len(story) == len([r for r in by_release if case_id in by_release[r]])
        ):
            return case_id, story[first_good][0]
    pytest.fail("no case is recorded as fixed in a cpu release")


@pytest.mark.e2e
def test_the_index_answers_at_a_glance_and_finds_a_pasted_issue(site_url, built_site, page):
    fixed, release = fixed_on_cpu()
    page.goto(f"{site_url}/index.html")
    assert page.inner_text(f'#cases-table tr[data-case="{fixed}"] td.standing').startswith(f"cpu: fixed in {release}")
    assert "beside the article's 63.2%" in page.inner_text('#figures li[data-target="cpu"]')

    cd = next(c for c in corpus.discover(ROOT / "cases") if c.case.source == "upstream")
    link = next(link for link in cd.case.links if "/issues/" in link)
    number = re.search(r"/issues/(\d+)$", link).group(1)
    for form in (link, f"pytorch/pytorch#{number}", f"issue {number}", f"#{number}"):
        page.fill("input[name=q]", form)
        assert set(visible_ids(page)) == {cd.case.id}, form
    page.goto(f"{site_url}/grid-cpu.html")  # the same search on the grid (and the record list: the same site.js)
    page.fill("input[name=q]", link)
    assert set(visible_ids(page)) == {cd.case.id}
    feed = (built_site / "feed.xml").read_text()  # built with --site-url: absolute links
    assert f'href="{SITE_ADDRESS}changes.html"' in feed and 'href="grid-' not in feed


def site_pages(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html"))


@pytest.mark.e2e
def test_no_page_scrolls_sideways_at_390_px(built_site, site_url, browser):
    narrow = browser.new_page(viewport={"width": 390, "height": 844})
    errors, widths = [], {}
    narrow.on("console", lambda msg: errors.append(f"{msg.type}: {msg.text}") if msg.type == "error" else None)
    narrow.on("pageerror", lambda err: errors.append(str(err)))
    for path in site_pages(built_site):
        narrow.goto(f"{site_url}/{path.relative_to(built_site)}")
        widths[str(path.relative_to(built_site))] = narrow.evaluate("document.documentElement.scrollWidth")
    narrow.close()
    print(f"{len(widths)} pages at 390 px: widest {max(widths.values())} px")
    assert len(widths) > 90
    assert {name: w for name, w in widths.items() if w > 390} == {}
    assert errors == []


@pytest.mark.e2e
def test_without_javascript_every_table_is_complete(site_url, browser):
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.goto(f"{site_url}/grid-cpu.html")
    assert plain.locator("#grid tbody tr:visible").count() == len(corpus.discover(ROOT / "cases"))
    assert not plain.locator("#filters").is_visible()
    plain.goto(f"{site_url}/matrix.html")
    assert plain.locator("#matrix tbody tr:visible").count() == expected_rows()
    context.close()


@pytest.mark.e2e
@pytest.mark.parametrize("width, height", [(1440, 900), pytest.param(390, 844, marks=pytest.mark.heavy)])
def test_axe_core_reports_no_violations_and_a_matrix_permalink_clears_the_header(site_url, browser, width, height):
    """axe-core on the index, both grids, the record list (opened on a permalink, whose row must land below the
    table's sticky header), three case pages, a changes page, the upstream issues and the glossary."""
    axe = axe_or_skip()
    changes = f"changes-{list(releases(Store(ROOT / 'results').load('cpu'), 'cpu', 'cases'))[-1]}.html"
    upstream = sorted(c.case.id for c in corpus.discover(ROOT / "cases") if c.case.source == "upstream")
    cases = [f"cases/{case_id}.html" for case_id in (CASE, upstream[0], upstream[-1])]
    anchor = f"{CASE}/cpu/2.13.0@float32"
    page = browser.new_page(viewport={"width": width, "height": height})
    for name in (
        "index.html",
        "grid-cpu.html",
        "grid-h100.html",
        f"matrix.html#{anchor}",
        *cases,
        changes,
        "upstream.html",
        "glossary.html",
    ):
        page.goto(f"{site_url}/{name}")
        if name.startswith("matrix"):
            page.wait_for_timeout(300)
            row, header = box_of(page, f'tr[id="{anchor}"]'), box_of(page, "#matrix thead th")
            assert header["y"] + header["height"] <= row["y"] and row["y"] + row["height"] <= height, (row, header)
        page.add_script_tag(path=str(axe))
        found = page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => `${v.id} (${v.impact}): ${v.nodes.length} nodes, e.g. ${v.nodes[0].html}`)"
        )
        print(f"axe-core on {name} at {width} px: {len(found)} violations")
        assert found == [], (name, width, found)
    page.close()


@pytest.mark.e2e
def test_what_runs_wrote_stays_text_in_the_browser_and_in_the_address(tmp_path, browser):
    root = hostile_root(tmp_path)
    out = tmp_path / "site"
    website.build(root, out, load_root_matrix(root), Store(root / "results"), STAMP)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    hostile = browser.new_page()
    fired, errors = [], []
    hostile.on("dialog", lambda dialog: (fired.append(dialog.message), dialog.dismiss()))
    hostile.on("pageerror", lambda err: errors.append(str(err)))
    try:
        for path in site_pages(out):
            hostile.goto(f"{base}/{path.relative_to(out)}")
        query = "?q=%3Cimg%20src%3Dx%20onerror%3Dalert(7)%3E&category=%22%3E%3Cscript%3Ealert(8)%3C%2Fscript%3E"
        hostile.goto(f"{base}/grid-cpu.html{query}#%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(9)%3E")
        assert hostile.input_value("input[name=q]") == "<img src=x onerror=alert(7)>"
        assert hostile.input_value("select[name=category]") == ""  # not one of its values: ignored
        hostile.goto(f"{base}/matrix.html")
        hostile.fill("input[name=q]", "<img src=x onerror=alert(2)>")  # the error's text is searchable, as text
        assert sorted(visible_ids(hostile)) == [f"{CASE}/cpu/2.13.0@float32"]
        assert "q=%3Cimg" in hostile.url
    finally:
        hostile.close()
        server.shutdown()
        server.server_close()
    assert fired == [] and errors == []


@pytest.mark.e2e
def test_screenshots_of_the_grid(site_url, page, tmp_path):
    """The README's picture (docs/site.png) is the cpu grid; REPROKIT_SITE_SCREENSHOTS=DIR keeps them."""
    page.set_viewport_size({"width": 1440, "height": 900})
    shots = {
        "grid": "grid-cpu.html?category=type-inference",
        "matrix": "matrix.html?target=cpu&release=current",
        "case": f"cases/{CASE}.html",
    }
    for shot, name in shots.items():
        page.goto(f"{site_url}/{name}")
        page.screenshot(path=tmp_path / f"{shot}.png")
        assert (tmp_path / f"{shot}.png").stat().st_size > 10_000
    if os.environ.get("REPROKIT_SITE_SCREENSHOTS"):
        for shot in shots:
            shutil.copy(tmp_path / f"{shot}.png", Path(os.environ["REPROKIT_SITE_SCREENSHOTS"]) / f"{shot}.png")


def test_a_backlog_kept_in_the_store_is_a_page_of_the_site_with_its_drafts_and_what_changed(tmp_path):
    """results/backlog/ (a merged `reprokit backlog`): backlog.html lists each issue under what a maintainer does,
    with its standing, releases and draft (published beside it), says what changed since the list it replaced, and
    escapes every issue's text; every page's navigation links it. Without the folder there is no page and no link."""
    from reprokit.publish import backlog_page
    from reprokit.store.backlog_journal import JOURNAL, PREVIOUS, Judgement, Ran, write_whole

    root = hostile_root(tmp_path)
    assert "backlog.html" not in (plain := site_of(root)) and "backlog.html" not in plain["index.html"]

    def judged(number, kind, state="OPEN", draft=None, title="a title", at="2026-12-01T00:00:00+00:00"):
        return Judgement(
            ident=f"#{number}",
            number=number,
            state=state,
            title=title,
            kind=kind,
            words="on torch 2.14.1",
            key="k",
            judged_at=at,
            releases=[Ran("2.14.1", "exits 0")],
            draft=draft,
        )

    hostile = "</li><script>alert(7)</script> [x](javascript:alert(8))"
    folder = root / "results" / "backlog"
    (folder / "drafts").mkdir(parents=True)
    (folder / "drafts" / "issue-11-comment.md").write_text("Is this fixed?\n")
    write_whole(
        folder / JOURNAL,
        [
            judged(11, "does not reproduce", draft="issue-11-comment.md", title=hostile),
            judged(12, "still reproduces"),
            judged(13, "does not reproduce", state="CLOSED"),
        ],
    )
    write_whole(folder / PREVIOUS, [judged(12, "does not reproduce"), judged(14, "still reproduces")])
    site = site_of(root)
    page = site["backlog.html"]
    assert site["backlog/drafts/issue-11-comment.md"] == "Is this fixed?\n"
    assert 'href="backlog/drafts/issue-11-comment.md"' in page
    assert "<script>alert(7)" not in page and "&lt;/li&gt;&lt;script&gt;alert(7)&lt;/script&gt;" in page
    sections = {h: body for h, body in re.findall(r"<h2[^>]*>([^<]+)</h2>(.*?)(?=<h2|</main>)", page, re.S)}
    for number, group in ((11, backlog_page.QUESTION), (12, backlog_page.STILL), (13, backlog_page.AGREES)):
        title = next(h for h in sections if h.startswith(group))
        assert f'issues/{number}"' in sections[title], (number, title)
    changed = sections["Changed since the last backlog"]
    assert "#11</a>: new, " in changed and "#14</a>: no longer in the set" in changed
    assert f"#12</a>: {backlog_page.QUESTION.lower()} → {backlog_page.STILL.lower()}" in changed
    assert "#13</a>: new" in changed
    assert '<a href="backlog.html">Backlog</a>' in site["index.html"]
