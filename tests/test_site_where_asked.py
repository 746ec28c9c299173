# ruff: noqa: F811  (the fixtures imported from test_site are parameters of the tests, as pytest passes them)
"""The site answers where it is asked (headless Chromium through Playwright, the repository's site): a case whose runs
on a target are all history is on the grid, the record list and the index standing, marked with when and on what it
last ran; a question pasted whole finds its issue's case, an empty search says why; a hardware word leads to its
target; the upstream page's flags carry the link kind, whether the case ever reproduced and triage's standing; one
rule for "changed" on the changes pages, the compare view, the grid marks and the feed; the badges are linked with the
Markdown to paste and name the release and the torch.compile failure rate. Then the smaller points, rendered
in-process. Every expectation comes from the store, matrix.yaml and issue-states.yaml, not from the site's code."""

import functools
import html
import json
import re

import pytest
from reprokit.model import corpus, issue_states
from reprokit.model.attribution import compile_rate
from reprokit.model.issue_states import issue_numbers
from reprokit.model.records import Record
from reprokit.model.verdict import Role, Verdict
from reprokit.publish import render
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import current, release_of, releases, superseded
from test_site import (  # noqa: F401 (fixtures: the repository's site, served on the loopback, and a browser)
    ROOT,
    SITE_ADDRESS,
    axe_or_skip,
    browser,
    built_site,
    committed,
    page,
    site_of,
    site_url,
    visible_ids,
)

MACHINE_CASE = "inductor-cpu-arctan-linalg-cond"  # pytorch/pytorch#150114: its repro's verdict depends on the machine


@functools.cache  # the committed corpus, read once per test process (each read parses and hashes every case)
def cases_by_id():
    return {c.case.id: c for c in corpus.discover(ROOT / "cases")}


@functools.cache  # of the committed store: the same for every caller, which only reads it
def history_only(target: str) -> dict[str, Record]:
    """Case -> its newest run that ran on the target (a repro's first), for each case of the corpus with no current
    record there: every record of it is history (superseded)."""
    loaded = committed(target)
    known = cases_by_id()
    now = {r.case for r in loaded.records if r.suite == "cases" and not superseded(r, loaded.content)}
    out: dict[str, Record] = {}
    for rec in loaded.records:
        if rec.suite != "cases" or rec.case not in known or rec.case in now or not rec.verdict.ran:
            continue
        rank = (Role.of(rec.variant) is Role.REPRO, rec.recorded_at)
        if rec.case not in out or rank > (Role.of(out[rec.case].variant) is Role.REPRO, out[rec.case].recorded_at):
            out[rec.case] = rec
    return out


def recorded_targets() -> list[str]:
    return [t for t in load_root_matrix(ROOT).targets if t in set(Store(ROOT / "results").targets())]


# ------------------------------------------------------------------ 1. history-only runs where people look


@pytest.mark.e2e
def test_history_only_runs_are_on_the_grid_the_record_list_and_the_index_marked(site_url, page):
    found = {t: history_only(t) for t in recorded_targets()}
    assert any(found.values()), "the store holds no history-only run (the two-GPU cases' 2 x GPU runs)"
    known = cases_by_id()
    for target, runs in found.items():
        if not runs:
            continue
        page.goto(f"{site_url}/grid-{target}.html")
        for case_id, rec in runs.items():
            cell = page.locator(f'td[id="{case_id}/{target}/{release_of(rec.torch)}"]')
            assert "history" in cell.get_attribute("class").split(), case_id
            tip = cell.locator(".tip").text_content()
            for said in ("not current", rec.recorded_at[:10], rec.device, str(rec.verdict), rec.torch):
                assert said in tip, (case_id, said, tip)
        categories = {known[c].case.category for c in runs}
        for category in categories:  # each history-only case's category is a filter value, and finds it
            page.select_option("select[name=category]", category)
            assert {c for c in runs if known[c].case.category == category} <= set(visible_ids(page)), category
        page.select_option("select[name=category]", "")
        page.select_option("select[name=verdict]", "history")
        assert set(visible_ids(page)) == set(runs)

        page.goto(f"{site_url}/matrix.html?target={target}")
        marked = page.eval_on_selector_all(
            "#matrix tbody tr.history", "rows => rows.map(r => [r.id.split('/')[0], r.innerText])"
        )
        assert {case for case, _ in marked} == set(runs)
        assert all(runs[case].recorded_at[:10] in text and "not current" in text for case, text in marked)

        page.goto(f"{site_url}/index.html")
        for case_id, rec in runs.items():
            standing = page.inner_text(f'#cases-table tr[data-case="{case_id}"] td.standing')
            assert f"{target}: history only" in standing and rec.recorded_at[:10] in standing, standing
            assert "no recorded run" not in standing
        category = sorted(categories)[0]
        page.fill("input[name=q]", f"{category} {target}")  # the search reads the standing
        assert {c for c in runs if known[c].case.category == category} <= set(visible_ids(page))


# ------------------------------------------------------------------ 2. a question pasted whole


@pytest.mark.e2e
def test_a_pasted_question_finds_its_issue_and_an_empty_search_says_why(site_url, page):
    number = next(n for n in issue_numbers(cases_by_id()[MACHINE_CASE].case))
    page.goto(f"{site_url}/index.html")
    for question in (
        f"is pytorch/pytorch#{number} fixed, on which hardware?",
        f"Does https://github.com/pytorch/pytorch/issues/{number} still fail on CPU?",
        f"what about issue {number}",
    ):
        page.fill("input[name=q]", question)
        assert visible_ids(page) == [MACHINE_CASE], question
        assert f"#{number}" in page.inner_text("#search-note"), question
    page.fill("input[name=q]", "qzxv-no-such-word")
    assert visible_ids(page) == []
    note = page.locator("#search-note")
    assert note.is_visible() and "qzxv-no-such-word" in note.inner_text() and "Try" in note.inner_text()
    page.fill("input[name=q]", "fsdp qzxv-no-such-word")  # a word no case holds is left out, and named
    fsdp = {c for c, cd in cases_by_id().items() if cd.case.category == "fsdp"}
    assert fsdp and fsdp <= set(visible_ids(page))
    assert "left out" in note.inner_text().lower() and "qzxv-no-such-word" in note.inner_text()
    page.goto(f"{site_url}/grid-cpu.html?q=qzxv-no-such-word")  # every search page says so
    assert "qzxv-no-such-word" in page.inner_text("#search-note")


# ------------------------------------------------------------------ 3. hardware words


@pytest.mark.e2e
def test_hardware_words_lead_to_their_target(site_url, page):
    matrix = load_root_matrix(ROOT)
    loaded = Store(ROOT / "results").load()
    recorded = recorded_targets()
    asked = 0
    for target in recorded:  # the cards the records were made on (never written here: taken from the run headers)
        for device in {h.device for h in loaded.runs.values() if h.target == target and h.device != "cpu"}:
            word = next(w for w in reversed(device.split()) if any(ch.isdigit() for ch in w))
            page.goto(f"{site_url}/index.html")
            page.fill("input[name=q]", word)
            note = page.locator("#target-note")
            assert note.is_visible() and f"target {target}" in note.inner_text(), (word, note.inner_text())
            assert page.locator(f'#target-note a[href="grid-{target}.html"]').count() == 1
            shown = visible_ids(page)
            assert shown and all(
                f"{target}:" in page.inner_text(f'#cases-table tr[data-case="{c}"] td.standing')
                or word.lower() in page.inner_text(f'#cases-table tr[data-case="{c}"]').lower()
                for c in shown
            )
            asked += 1
    assert asked
    for word, where in (("Ascend", "ascend"), ("910b", "910b"), ("rocm", "rocm"), ("MI300", "mi300")):
        targets = [
            n for n, t in matrix.targets.items() if where in f"{n} {t.family} {t.device.kind} {t.description}".lower()
        ]
        assert targets, word  # matrix.yaml has such hardware
        page.goto(f"{site_url}/index.html")
        page.fill("input[name=q]", word)
        note = page.inner_text("#target-note")
        for target in targets:
            assert target in note and (
                "not recorded (no such hardware has run it)" in note
                if target not in recorded
                else f"target {target}" in note
            ), (word, note)


# ------------------------------------------------------------------ 4. the upstream page's flags


def reproduced_here(case_id: str) -> bool:
    """Whether the case's repro reproduced on any recorded release of any target: a current record (on any machine),
    or its history-only last run."""
    loaded = committed()
    for rec in loaded.records:
        if (
            rec.case == case_id
            and Role.of(rec.variant) is Role.REPRO
            and not superseded(rec, loaded.content)
            and (rec.verdict is Verdict.REPRODUCES or "reproduces" in (rec.on_other_machines or {}).values())
        ):
            return True
    return any(
        case_id in runs and runs[case_id].verdict is Verdict.REPRODUCES
        for runs in (history_only(t) for t in recorded_targets())
    )


@pytest.mark.e2e
def test_the_upstream_flags_say_the_link_kind_whether_it_ever_reproduced_and_triage(site_url, page):
    states = issue_states.load(ROOT)
    known = cases_by_id()
    page.goto(f"{site_url}/upstream.html")
    flagged = page.eval_on_selector_all(
        '#upstream-issues tbody tr[data-flag="flagged"]',
        "rows => rows.map(r => [r.dataset.case, r.querySelector('td.flag-cell').innerText, r.dataset.link])",
    )
    opened = [row for row in flagged if "open upstream, does not reproduce" in row[1]]
    assert opened
    for case_id, text, link in flagged:
        entries = [states.issues[n] for n in issue_numbers(known[case_id].case) if n in states.issues]
        kind = next((s.link for s in entries if s.link), None)
        assert link == (kind or "not judged"), case_id
        assert ("linked as related only" in text) == (kind == "related"), (case_id, text)
        assert ("never reproduced here" in text) == (not reproduced_here(case_id)), (case_id, text)
        triage = next((s for s in entries if s.triage), None)
        if triage:
            assert html.unescape(triage.triage) in text and (triage.triage_torch or "") in text, (case_id, text)
        else:
            assert "not triaged" in text, (case_id, text)


# ------------------------------------------------------------------ 5. one rule for "changed"


@pytest.mark.e2e
def test_one_rule_for_changed_on_the_changes_pages_the_compare_view_the_grid_and_the_feed(site_url, page):
    feedparser = pytest.importorskip("feedparser")
    target = "cpu"
    order = list(releases(committed(target), target, "cases"))
    assert len(order) > 2
    feed = feedparser.parse(page.context.request.get(f"{site_url}/feed.xml").text())
    newly = 0
    for old, new in zip(order, order[1:], strict=False):
        page.goto(f"{site_url}/changes-{new}.html")
        listed = (
            page.eval_on_selector_all(
                "#changes tbody tr",
                "rows => rows.map(r => [r.cells[1].innerText, r.cells[2].innerText, "
                "r.cells[4].innerText, r.cells[5].innerText, r.cells[3].innerText])",
            )
            if page.locator("#changes").count()
            else []
        )
        on_page = {case for t, case, _, _, _ in listed if t == target}
        repro_changed = {case for t, case, _, _, run in listed if t == target and run.startswith("repro@")}
        assert not any("skipped" in before or "skipped" in now for _, _, before, now, _ in listed), new
        if page.locator("#not-changes").inner_text():
            newly += 1
        page.goto(f"{site_url}/compare.html?a={target}@{old}&b={target}@{new}")
        rows = page.eval_on_selector_all(
            "#compare-table tbody tr", "rows => rows.map(r => [r.dataset.case, r.dataset.differs])"
        )
        assert {case for case, d in rows if d == "yes"} == on_page, (old, new)
        page.goto(f"{site_url}/grid-{target}.html")
        marked = page.eval_on_selector_all(
            f'#grid td.changed[id$="/{target}/{new}"]', "cells => cells.map(c => c.id.split('/')[0])"
        )
        assert set(marked) == repro_changed, (old, new)  # a grid cell is the repro's verdict
        entries = {
            m.group(1).split("/")[0]
            for e in feed.entries
            if (m := re.match(rf"^{target}, torch {re.escape(new)}: (\S+) ", e.title))
        }
        assert entries == on_page, (old, new)
    assert newly, "no release has a run that newly ran: the rule is not exercised"


# ------------------------------------------------------------------ 6. badges


@pytest.mark.e2e
def test_badges_are_linked_with_the_markdown_and_name_the_release_and_the_compile_rate(site_url, page):
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    by_id = {i: cd.case for i, cd in cases_by_id().items()}
    render.gather(ROOT, matrix, loaded)  # the store now knows the cases' content (superseded records are history)
    for target in recorded_targets():
        view = current(loaded, target, "cases", matrix.targets[target].pins.torch)
        failures, ran = compile_rate(view.records, by_id)
        for name in ("index.html", f"grid-{target}.html"):
            page.goto(f"{site_url}/{name}")
            figure = page.locator(f'figure.badge[data-target="{target}"]')
            image = figure.locator("img")
            assert image.evaluate("img => img.complete && img.naturalWidth > 0"), (name, target)
            alt = image.get_attribute("alt")
            assert f"torch {view.release}" in alt and f"({failures}/{ran} repros)" in alt, (name, alt)
            assert f"{failures / ran:.1%}" in alt and "reproduce" not in alt, alt  # never the any-reason count
            markdown = figure.locator("code.badge-markdown").inner_text()
            assert markdown == f"[![{alt}]({SITE_ADDRESS}badges/{target}.svg)]({SITE_ADDRESS}grid-{target}.html)"
            assert figure.locator("a").get_attribute("href") == f"grid-{target}.html"
        endpoint = json.loads(page.context.request.get(f"{site_url}/badges/{target}.json").text())
        assert f"{endpoint['label']}: {endpoint['message']}" == alt


@pytest.mark.e2e
def test_axe_core_reports_no_violations_where_the_answers_are(site_url, browser):
    axe = axe_or_skip()
    targets = [t for t in recorded_targets() if history_only(t)]
    for width, height in ((1440, 900), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        for name in (
            "index.html?q=is+%23150114+fixed%2C+on+which+hardware%3F",
            "index.html?q=MI300",
            "index.html?q=qzxv",
            *(f"grid-{t}.html?verdict=history" for t in targets),
            "upstream.html",
            "matrix.html?q=H200",
            "changes-2.9.1.html",
            "sweeps.html",
            "cases/fsdp-article-config.html",
        ):
            page.goto(f"{site_url}/{name}")
            page.add_script_tag(path=str(axe))
            found = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                ".map(v => `${v.id} (${v.impact}): ${v.nodes.length} nodes, e.g. ${v.nodes[0].html}`)"
            )
            assert found == [], (name, width, found)
        page.close()


# ------------------------------------------------------------------ 7. the smaller points, rendered in-process


@pytest.fixture(scope="module")
def repository_site() -> dict[str, str]:
    return site_of(ROOT, site_url=SITE_ADDRESS)


def test_a_machine_dependent_verdict_says_by_machine_in_the_target_report_and_the_case_x_target_table(tmp_path):
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    render.write_all(ROOT, tmp_path, matrix, loaded)
    by_machine = {
        r.case
        for r in current(loaded, "cpu", "cases", matrix.targets["cpu"].pins.torch).records
        if r.machine_dependent and Role.of(r.variant) is Role.REPRO
    }
    assert by_machine
    report, index = (tmp_path / "cpu.md").read_text(), (tmp_path / "README.md").read_text()
    for case_id in by_machine:
        for text in (report, index):
            row = next(line for line in text.splitlines() if line.startswith(f"| [`{case_id}`]"))
            assert "by machine" in row, row


def test_reproduce_locally_runs_a_gpu_only_case_on_its_device_from_its_folder(repository_site):
    gpu_only = [cd for cd in cases_by_id().values() if "cpu" not in cd.case.requires.devices]
    assert gpu_only
    for cd in gpu_only:
        page = repository_site[f"cases/{cd.case.id}.html"]
        told = page[page.index('<h2 id="reproduce">') : page.index('<h2 id="folder">')]
        assert "REPRO_DEVICE=cpu" not in told and f"cases/{cd.case.id}" in told, cd.case.id
        if cd.case.requires.world_size > 1:
            assert f"--nproc-per-node {cd.case.requires.world_size}" in told, cd.case.id


def test_sweeps_page_gives_the_wall_of_the_whole_sweep(repository_site):
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    for target in recorded_targets():
        view = current(loaded, target, "sweep", matrix.targets[target].pins.torch)
        if view is None:
            continue
        section = re.search(rf'<section id="sweep-{target}">(.*?)</section>', repository_site["sweeps.html"], re.S)
        said = re.sub(r"<[^>]+>", "", section.group(1).split("<table", 1)[0])
        walls = re.findall(r"(\d+) s wall", said)  # the sweep's own first, then each run's
        assert walls and walls[0] == f"{sum(h.wall_seconds for h in view.runs):.0f}", said
        assert f"{len(view.records)} cells" in said
        if len(view.runs) > 1:
            assert f"from {len(view.runs)} runs" in said


def test_the_ledger_names_releases_without_a_current_run_and_history_only_runs(tmp_path, repository_site):
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    published = render.gather(ROOT, matrix, loaded)
    render.write_all(ROOT, tmp_path, matrix, loaded)
    readme = (tmp_path / "README.md").read_text()
    every = published.histories["cpu"]
    for claim in published.claims.claims:
        if not claim.cases or claim.untestable:
            continue
        row = next(
            (
                line
                for line in readme.splitlines()
                if line.startswith(f"| §{claim.section} |") and all(f"[`{c}`]" in line for c in claim.cases)
            ),
            None,
        )
        cells = row.split(" | ") if row else []
        held = re.search(r"\((?:since|holds) ([^;) ]+)", cells[3]) if len(cells) > 3 else None
        if not held:
            continue
        variant = "article_fix" if claim.article_fix else "repro"
        start = list(every).index(held.group(1))
        gaps = [
            rel
            for rel in list(every)[start:]
            if not any(r.case in claim.cases and r.variant == variant for r in every[rel])
        ]
        for rel in gaps:
            assert re.search(rf"not run on [^)]*\b{re.escape(rel)}\b", cells[3]), (claim.id, rel, cells[3])
    histories = {t: history_only(t) for t in recorded_targets()}
    ledger = repository_site["ledger.html"]
    for claim in published.claims.claims:
        for target, runs in histories.items():
            mine = [c for c in claim.cases if c in runs]
            if not mine or claim.untestable:
                continue
            row = re.search(rf'<tr id="claim-{re.escape(claim.id)}">(.*?)</tr>', ledger, re.S).group(1)
            cell = re.search(
                rf'<td class="ledger [^"]*" data-target="{target}" data-verdict="not run">(.*?)</td>', row, re.S
            )
            if cell:
                assert "no recorded run" not in cell.group(1) and "history only" in cell.group(1), claim.id


def test_a_grid_cell_of_a_release_not_recorded_says_so(repository_site):
    grid = repository_site["grid-cpu.html"]
    empty = re.findall(r'<td class="none"[^>]*>(.*?)</td>', grid)
    assert empty and all("not recorded" in cell for cell in empty)
    assert (
        "—</span> marks a release on which the case was not recorded" in grid
        or "marks a release on which the case was not recorded" in grid
    )
