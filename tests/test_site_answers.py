# ruff: noqa: F811  (the fixtures imported from test_site are parameters of the tests, as pytest passes them)
"""The site answers for every hardware target and every machine (headless Chromium through Playwright, axe-core): a
pasted issue whose repro's verdict depends on the machine shows each machine's verdict, a question about a target no
run has recorded finds "not recorded", a search of several words finds its case, the search is the first skip link's
stop and above the fold, every focused grid cell is wholly in view at 390 px, Escape closes a tooltip whatever the
mouse did, and the compare view lists the cases two releases disagree on. The expectations come from the store and
matrix.yaml, not from the site's code."""

import gzip
import html
import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict

import pytest
from reprokit.model import corpus
from reprokit.model.records import Record
from reprokit.model.verdict import Role, Verdict
from reprokit.publish import render
from reprokit.publish.site import website
from reprokit.publish.site.stamp import BuildStamp
from reprokit.run.request import load_root_matrix
from reprokit.store.machines import machine_of
from reprokit.store.store import Store
from reprokit.store.views import know_content, release_of, superseded
from test_site import (  # noqa: F401 (fixtures: the repository's site, served on the loopback, and a browser)
    ROOT,
    axe_or_skip,
    browser,
    built_site,
    page,
    site_url,
    visible_ids,
)

STAMP = BuildStamp("0123456789abcdef0123456789abcdef01234567", "2026-12-01T12:00:00+00:00")
MACHINE_CASE = "inductor-cpu-arctan-linalg-cond"  # pytorch/pytorch#150114: reproduces on one CPU model, not another


def machine_verdicts(case_id: str, target: str) -> dict[str, set[str]]:
    """machine -> the verdicts its runs of the case's repro gave on the target, from the store's records (the run's
    own machine and the verdicts of the other machines' records each replaced)."""
    loaded = know_content(Store(ROOT / "results").load(target), corpus.discover(ROOT / "cases"))
    out: dict[str, set[str]] = defaultdict(set)
    for rec in loaded.records:
        if rec.case == case_id and Role.of(rec.variant) is Role.REPRO and rec.verdict.ran:
            if machine := machine_of(loaded.runs.get(rec.run_id)):
                out[machine].add(str(rec.verdict))
            for machine, verdict in (rec.on_other_machines or {}).items():
                out[machine].add(verdict)
    return out


@pytest.mark.e2e
def test_a_pasted_issue_whose_verdict_depends_on_the_machine_shows_each_machines_verdict(site_url, page):
    by_machine = machine_verdicts(MACHINE_CASE, "cpu")
    assert len(by_machine) > 1 and {"reproduces"} in by_machine.values(), by_machine  # the store's own fact
    page.goto(f"{site_url}/index.html")
    page.fill("input[name=q]", "https://github.com/pytorch/pytorch/issues/150114")
    assert visible_ids(page) == [MACHINE_CASE]
    standing = page.inner_text(f'#cases-table tr[data-case="{MACHINE_CASE}"] td.standing')
    for machine, verdicts in by_machine.items():
        said = re.search(rf"cpu on {re.escape(machine)}: ([^·]+)", standing)
        assert said, (machine, standing)
        assert ("does not reproduce" in said.group(1)) == ("does-not-reproduce" in verdicts), (machine, standing)

    page.goto(f"{site_url}/cases/{MACHINE_CASE}.html")
    rows = page.locator('#first-bad-good tr[data-target="cpu"]')
    assert sorted(rows.nth(n).get_attribute("data-machine") for n in range(rows.count())) == sorted(by_machine)
    for machine, verdicts in by_machine.items():
        first_bad = page.inner_text(f'#first-bad-good tr[data-machine="{machine}"] td:nth-child(2)')
        assert (first_bad != "none recorded") == ("reproduces" in verdicts), (machine, first_bad)
    told = page.inner_text("p.reproduce-from")
    reproducing = [m for m, v in by_machine.items() if "reproduces" in v]
    assert told.startswith("The newest recorded release on which the repro reproduces") and any(
        f"on {m}" in told for m in reproducing
    ), told

    page.goto(f"{site_url}/upstream.html")
    page.fill("input[name=q]", "#150114")
    shown = page.eval_on_selector_all(
        "#upstream-issues tbody tr:not([hidden])",
        "rows => rows.map(r => [r.getAttribute('data-target'), r.getAttribute('data-machine')])",
    )
    assert sorted(m for t, m in shown if t == "cpu") == sorted(by_machine)


@pytest.mark.e2e
def test_a_question_about_a_target_no_run_has_recorded_finds_not_recorded(site_url, page):
    targets = list(load_root_matrix(ROOT).targets)
    recorded = set(Store(ROOT / "results").targets())
    assert "a100" in targets and "a100" not in recorded
    page.goto(f"{site_url}/index.html")
    assert page.eval_on_selector_all("#targets-table tbody tr", "rows => rows.map(r => r.dataset.target)") == [
        *(t for t in targets if t in recorded),
        *(t for t in targets if t not in recorded),
    ]
    page.fill("input[name=q]", "A100")
    note = page.locator("#target-note")
    assert (
        note.is_visible()
        and "a100" in note.inner_text()
        and "not recorded (no such hardware has run it)" in note.inner_text()
    )
    for case_id in visible_ids(page):  # only a case that mentions the hardware, none with a verdict there
        row = page.locator(f'#cases-table tr[data-case="{case_id}"]')
        assert "a100" in row.inner_text().lower() and "a100:" not in row.locator("td.standing").inner_text()
    note.locator("a").click()
    page.wait_for_url("**/grid-a100.html")
    assert "Not recorded (no such hardware has run it)" in page.inner_text("main")
    assert "reprokit run --target a100" in page.inner_text("main")
    page.goto(f"{site_url}/cases/{MACHINE_CASE}.html")
    for target in targets:
        if target not in recorded:
            assert "not recorded (no such hardware has run it)" in page.inner_text(
                f'#first-bad-good tr[data-target="{target}"]'
            )


@pytest.mark.e2e
@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_search_is_the_first_skip_links_stop_above_the_fold_with_the_issue_state(site_url, browser, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{site_url}/index.html")
    box = page.locator("input[name=q]").bounding_box()
    assert box["y"] + box["height"] <= height, box  # above the fold
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "q"
    state = page.inner_text(f'#cases-table tr[data-case="{MACHINE_CASE}"] td.issue')
    case = next(c for c in corpus.discover(ROOT / "cases") if c.case.id == MACHINE_CASE).case
    assert state == f"#150114 {case.issue_state}"  # the issue's state on the index row
    page.close()


@pytest.mark.e2e
def test_a_search_of_two_words_finds_its_case(site_url, page):
    title = next(c for c in corpus.discover(ROOT / "cases") if c.case.id == MACHINE_CASE).case.title.lower()
    assert "cond" in title and "arctan" in title
    page.goto(f"{site_url}/index.html")
    page.fill("input[name=q]", "cond ARCTAN")  # two words, in another order than the title's
    shown = visible_ids(page)
    assert MACHINE_CASE in shown and len(shown) < page.locator("#cases-table tbody tr").count()
    for case_id in shown:
        text = page.inner_text(f'#cases-table tr[data-case="{case_id}"]').lower()
        assert "cond" in text and "arctan" in text
    assert "q=cond+ARCTAN" in page.url


IN_VIEW = """cell => {
  const r = cell.getBoundingClientRect();
  const scroll = cell.closest('.scroll'), s = scroll.getBoundingClientRect();
  const stuck = cell.parentElement.cells[0].getBoundingClientRect();
  const head = cell.closest('table').tHead.getBoundingClientRect();
  const left = Math.max(s.left + scroll.clientLeft, stuck.right, 0);
  const right = Math.min(s.left + scroll.clientLeft + scroll.clientWidth, document.documentElement.clientWidth);
  const top = Math.max(s.top + scroll.clientTop, head.bottom, 0);
  const bottom = Math.min(s.top + scroll.clientTop + scroll.clientHeight, document.documentElement.clientHeight);
  return {id: cell.id, ok: r.left >= left - 0.5 && r.right <= right + 0.5 && r.top >= top - 0.5 &&
          r.bottom <= bottom + 0.5, cell: [r.left, r.top, r.right, r.bottom], view: [left, top, right, bottom]};
}"""
# The focused grid cell's box against what is in view: its scrolling box, clear of the sticky case column and header,
# inside the window.


@pytest.mark.e2e
def test_every_focused_grid_cell_is_wholly_in_view_at_390_px(site_url, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{site_url}/grid-cpu.html")
    cells = page.locator("#grid tbody td a").count()
    assert cells > 200
    page.locator("#grid tbody tr:first-child th a").focus()
    cut = []
    for _ in range(40):  # by the keyboard, as a visitor moves: the first rows' cells
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('#grid tbody td')"):
            found = page.evaluate(f"({IN_VIEW})(document.activeElement.closest('td'))")
            cut += [] if found["ok"] else [found]
    # every cell, focused in the page's order (the focus moves and scrolls as Tab's does)
    cut += page.evaluate(f"""() => Array.from(document.querySelectorAll('#grid tbody td a')).map(a => {{
      a.focus(); return ({IN_VIEW})(a.closest('td')); }}).filter(found => !found.ok)""")
    assert cut == [], f"{len(cut)} focused cells of {cells} partly out of view, e.g. {cut[:3]}"

    page.close()


@pytest.mark.e2e
def test_escape_closes_the_focused_cells_tooltip_after_the_mouse_passed_over_the_grid(site_url, page):
    page.goto(f"{site_url}/grid-cpu.html")
    link = page.locator("#grid tbody tr:nth-child(3) td:nth-child(3) a")
    link.focus()
    tip = page.locator(f'[id="{link.get_attribute("aria-describedby")}"]')
    assert tip.bounding_box()["width"] > 100
    box = page.locator("#grid tbody tr:nth-child(6) td:nth-child(2)").bounding_box()
    page.mouse.move(box["x"] + 5, box["y"] + 5)  # over another cell while this one has the focus
    page.mouse.move(2, 2)  # and off the table
    assert tip.bounding_box()["width"] > 100  # the focused cell's tooltip shows again
    page.keyboard.press("Escape")
    assert tip.bounding_box()["width"] <= 1
    assert page.evaluate("document.activeElement") is not None and link.evaluate("a => a === document.activeElement")


@pytest.mark.e2e
def test_axe_core_reports_no_violations_on_the_new_answers(site_url, browser):
    """axe-core at 1440 and 390 px on the index answering an unrecorded target, an unrecorded target's page, the case
    page of a machine-dependent verdict and the compare view."""
    axe = axe_or_skip()
    for width, height in ((1440, 900), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        for name in (
            "index.html?q=a100",
            "grid-a100.html",
            f"cases/{MACHINE_CASE}.html",
            "upstream.html?q=150114",
            "compare.html?a=cpu@2.13.0&b=cpu@2.14.1",
        ):
            page.goto(f"{site_url}/{name}")
            page.add_script_tag(path=str(axe))
            found = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                ".map(v => `${v.id} (${v.impact}): ${v.nodes.length} nodes, e.g. ${v.nodes[0].html}`)"
            )
            assert found == [], (name, width, found)
        page.close()


def changed_cases(target: str, old: str, new: str) -> set[str]:
    """Cases with a run (variant and dtype) whose current verdict differs between two releases of a target, neither
    side flaky nor machine-dependent (the changes pages' rule), from the store's records."""
    loaded = know_content(Store(ROOT / "results").load(target), corpus.discover(ROOT / "cases"))
    newest: dict[tuple[str, str], Record] = {}
    for rec in loaded.records:
        if rec.suite == "cases" and release_of(rec.torch) in (old, new) and not superseded(rec, loaded.content):
            key = (release_of(rec.torch), rec.key)
            if key not in newest or newest[key].recorded_at <= rec.recorded_at:
                newest[key] = rec
    out = set()
    for (release, key), rec in newest.items():
        was = newest.get((old, key))
        if (
            release == new
            and was
            and was.verdict != rec.verdict
            and not (was.machine_dependent or rec.machine_dependent)
            and Verdict.FLAKY not in (was.verdict, rec.verdict)
        ):
            out.add(rec.case)
    return out


@pytest.mark.e2e
def test_the_compare_view_of_two_releases_lists_the_cases_that_differ_first(site_url, page):
    differ = changed_cases("cpu", "2.13.0", "2.14.1")
    assert differ
    page.goto(f"{site_url}/compare.html?a=cpu@2.13.0&b=cpu@2.14.1")
    rows = page.eval_on_selector_all(
        "#compare-table tbody tr:not([hidden])", "rows => rows.map(r => [r.dataset.case, r.dataset.differs])"
    )
    listed = [case for case, d in rows if d == "yes"]
    assert set(listed) == differ
    assert [d for _, d in rows] == sorted((d for _, d in rows), key=lambda d: d != "yes")  # those that differ first
    page.select_option("select[name=b]", "cpu@2.15.0")
    assert "b=cpu%402.15.0" in page.url or "b=cpu@2.15.0" in page.url  # the view is its address
    again = page.url
    page.goto(again)
    assert page.input_value("select[name=b]") == "cpu@2.15.0"


def test_every_target_has_a_published_badge_and_the_big_tables_a_gzip_copy(tmp_path):
    """badges/<target>.json is a shields.io endpoint (the report's badge.json where the target is recorded, a grey
    "not recorded" one where not) and badges/<target>.svg draws the same words; matrix.html, the grids and
    results.json have a gzip copy beside them that is the same bytes unpacked, made the same twice."""
    matrix, store = load_root_matrix(ROOT), Store(ROOT / "results")
    website.build(ROOT, tmp_path / "a", matrix, store)
    website.build(ROOT, tmp_path / "b", matrix, store)
    site = tmp_path / "a"
    recorded = set(store.targets())
    for target in matrix.targets:
        endpoint = json.loads((site / "badges" / f"{target}.json").read_text())
        assert endpoint["schemaVersion"] == 1 and {"label", "message", "color"} <= set(endpoint)
        if target in recorded:
            assert endpoint == json.loads((ROOT / "reports" / target / "badge.json").read_text())
        else:
            assert endpoint["message"] == "not recorded" and endpoint["color"] == "lightgrey"
        drawn = ET.fromstring((site / "badges" / f"{target}.svg").read_text())
        title = drawn.find("{http://www.w3.org/2000/svg}title").text
        assert title == f"{endpoint['label']}: {endpoint['message']}"
    packed = sorted(p.name for p in site.glob("*.gz"))
    assert {"matrix.html.gz", "grid-cpu.html.gz", "results.json.gz"} <= set(packed)
    for name in packed:
        data = (site / name).read_bytes()
        assert gzip.decompress(data) == (site / name[:-3]).read_bytes()
        assert data == (tmp_path / "b" / name).read_bytes()


def test_reproduce_locally_is_built_from_a_run_that_ran_and_names_its_machine(tmp_path):
    """Every case page's "reproduce locally" names a release and target on which the store holds a run of its repro
    that ran (never a skipped one), reproducing where it says so, and the machine that run was made on."""
    loaded = know_content(Store(ROOT / "results").load(), corpus.discover(ROOT / "cases"))
    ran: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    machines: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for rec in loaded.records:
        if Role.of(rec.variant) is Role.REPRO and rec.verdict.ran and not superseded(rec, loaded.content):
            where = (rec.case, rec.target, release_of(rec.torch))
            ran[where] |= {str(rec.verdict), *(v for v in (rec.on_other_machines or {}).values() if v != "skipped")}
            machines[where] |= {machine_of(loaded.runs.get(rec.run_id)), *(rec.on_other_machines or {})}
    site = website.pages(render.gather(ROOT, load_root_matrix(ROOT), Store(ROOT / "results").load()), [], STAMP)
    told = 0
    for cd in corpus.discover(ROOT / "cases"):
        page = site[f"cases/{cd.case.id}.html"]
        said = re.search(r'<p class="reproduce-from">(.*?)</p>', page, re.S)
        if not any(case == cd.case.id for case, _, _ in ran):
            assert said is None, cd.case.id
            continue
        found = re.search(r"is torch (\S+) \(<code>([^<]+)</code>, on (.+?)\)[.;]", said.group(1))
        assert found, (cd.case.id, said.group(1))
        release, target, machine = found.groups()
        where = (cd.case.id, target, release)
        assert where in ran, (where, said.group(1))
        assert ("reproduces" in ran[where]) == said.group(1).startswith("The newest recorded release on which")
        assert html.unescape(machine) in machines[where], (where, machine)
        told += 1
    assert told > 50


@pytest.mark.e2e
def test_a_phone_lays_out_the_record_list_a_hundred_rows_at_a_time_and_a_permalink_still_opens(site_url, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{site_url}/matrix.html")
    total = page.locator("#matrix tbody tr").count()
    assert total > 200
    assert len(visible_ids(page)) == 100 and "the button below the table shows more" in page.inner_text("#shown")
    page.click("button.more")
    assert len(visible_ids(page)) == 200
    last = page.eval_on_selector("#matrix tbody tr:last-child", "r => r.id")
    page.goto("about:blank")  # a fresh load, not a jump within the page
    page.goto(f"{site_url}/matrix.html#{last}")
    page.wait_for_timeout(300)
    assert page.locator(f'tr[id="{last}"]').is_visible()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{site_url}/matrix.html")
    assert len(visible_ids(page)) == total and page.locator("button.more").count() == 0  # a wide screen: every row
    page.close()


@pytest.mark.e2e
def test_the_compare_view_of_two_targets_from_its_address(site_url, page):
    loaded = know_content(Store(ROOT / "results").load(), corpus.discover(ROOT / "cases"))
    known = {c.case.id for c in corpus.discover(ROOT / "cases")}
    on = {
        t: {
            r.case
            for r in loaded.records
            if r.target == t
            and release_of(r.torch) == "2.11.0"
            and r.case in known
            and r.suite == "cases"
            and not superseded(r, loaded.content)
        }
        for t in ("cpu", "h100")
    }
    page.goto(f"{site_url}/compare.html?a=cpu@2.11.0&b=h100@2.11.0")
    assert (
        page.inner_text("#compare-a") == "cpu, torch 2.11.0" and page.inner_text("#compare-b") == "h100, torch 2.11.0"
    )
    rows = page.eval_on_selector_all(
        "#compare-table tbody tr", "rows => rows.map(r => [r.dataset.case, r.dataset.differs])"
    )
    assert {case for case, _ in rows} == on["cpu"] | on["h100"]
    assert {case for case, d in rows if d == "one side"} == on["cpu"] ^ on["h100"]
