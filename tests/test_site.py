"""The compatibility site (`reprokit site`): rendered in-process it escapes what runs wrote and is byte-identical from
the same store; opened in a real browser (headless Chromium through Playwright) it shows the repository's recorded
figures, filters its matrix and shows each case's verdicts."""
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from reprokit.model import corpus
from reprokit.model.verdict import Verdict, rate_text, reproduce_rate
from reprokit.publish import index_page, render, website
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import current, releases
from support import record

ROOT = Path(__file__).resolve().parents[1]
CASE = "custom-op-unregistered-gemm"


def read_site(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def hostile_root(tmp_path: Path) -> Path:
    """A repository of one case whose script and recorded run both carry markup."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    repro = root / "cases" / CASE / "repro.py"
    repro.write_text(repro.read_text() + "# </code></pre><script>alert('script')</script>\n")
    Store(root / "results").merge([
        record(case=CASE, verdict="fails-differently", exception="torch._dynamo.exc.Unsupported",
               message="backend='inductor' raised:\n<script>alert(1)</script> & <img src=x onerror=alert(2)>",
               stage="dynamo", status="fail", why='<b onmouseover="x">'),
        record(case=CASE, variant="fixed", verdict="fix-works", status="pass", why="ran and exited 0")])
    return root


def test_site_escapes_what_cases_and_runs_wrote(tmp_path):
    root = hostile_root(tmp_path)
    site = website.pages(render.gather(root, load_root_matrix(root), Store(root / "results").load()))
    page = site[f"cases/{CASE}.html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(&#39;script&#39;)&lt;/script&gt;" in page
    for name, text in site.items():
        assert "<script>alert" not in text and "<img src=x" not in text and "<b onmouseover" not in text, name
    assert "🟠 fails-differently" in site["matrix.html"]  # the symbol and the word, not colour alone


def test_site_is_the_same_bytes_from_the_same_store(tmp_path):
    matrix, store = load_root_matrix(ROOT), Store(ROOT / "results")
    first, second = (website.build(ROOT, tmp_path / folder, matrix, store) for folder in ("a", "b"))
    assert len(first) == len(second) > 5
    assert read_site(tmp_path / "a") == read_site(tmp_path / "b")


def test_site_index_shows_the_markdown_reports_figures():
    matrix, loaded = load_root_matrix(ROOT), Store(ROOT / "results").load()
    published = render.gather(ROOT, matrix, loaded)
    index = website.pages(published)["index.html"]
    markdown = index_page.render_index(published.views, {c.case.id: c for c in published.cases},
                                   published.descriptions, published.claims, published.sweeps)
    assert published.views
    for view in published.views.values():
        rate = rate_text(*reproduce_rate(view.records))
        assert rate in index and f"**{rate}**" in markdown


# ---------------------------------------------------------------- in a real browser

def browser_or_skip() -> str:
    """The Chromium binary, with Playwright importable; skipped where either is absent, except on CI."""
    found = os.environ.get("REPROKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    missing = [what for what, ok in (("chromium", found), ("playwright", _has_playwright())) if not ok]
    if missing:
        reason = f"{' and '.join(missing)} not installed (apt-get install chromium; pip install -e .[test])"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    return found


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
            keys |= {(name, release, r.case, r.dtype) for r in records
                     if r.case in cases and (category is None or cases[r.case].category == category)}
    return len(keys)


@pytest.mark.e2e
def test_the_site_in_a_browser(tmp_path):
    chromium = browser_or_skip()
    from playwright.sync_api import sync_playwright

    out = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "reprokit", "--root", str(ROOT), "site", "--out", str(out)], check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT / "tools")})
    case_folders = [p for p in (ROOT / "cases").iterdir() if p.is_dir()]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(10_000)
        errors = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("requestfailed", lambda req: errors.append(f"failed {req.url}"))

        page.goto((out / "index.html").as_uri())
        assert page.inner_text("#case-count") == str(len(case_folders))
        assert page.locator("#cases-table tbody tr").count() == len(case_folders)
        page.screenshot(path=tmp_path / "index.png", full_page=True)

        page.goto((out / "matrix.html").as_uri())
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

        page.goto((out / "matrix.html").as_uri() + "?target=cpu&release=current")
        assert page.locator("#matrix tbody tr:visible").count() == expected_rows(target="cpu", current_only=True)
        page.screenshot(path=tmp_path / "matrix.png")

        page.goto((out / "cases" / f"{CASE}.html").as_uri())
        recorded = defaultdict(dict)
        for rel, records in releases(Store(ROOT / "results").load(target="cpu"), "cpu", "cases").items():
            for rec in records:
                if rec.case == CASE:
                    recorded[(rel, rec.dtype)][rec.variant] = rec.verdict
        assert recorded, f"no recorded cpu run of {CASE}"
        for (rel, dtype), variants in recorded.items():
            for variant, verdict in variants.items():
                cell = page.locator(f'#verdicts-table tr[data-target="cpu"][data-release="{rel}"]'
                                    f'[data-dtype="{dtype}"] td[data-variant="{variant}"]')
                assert cell.inner_text().startswith(f"{Verdict(verdict).symbol} {verdict}")
        assert f"reprokit upstream {CASE}" in page.inner_text("#upstream + p + pre")
        page.screenshot(path=tmp_path / "case.png", full_page=True)
        browser.close()
    assert not errors, errors
    assert all((tmp_path / f"{name}.png").stat().st_size > 10_000 for name in ("index", "matrix", "case"))
    if os.environ.get("REPROKIT_SITE_SCREENSHOTS"):  # where to keep them (docs/site.png is one)
        for name in ("index", "matrix", "case"):
            shutil.copy(tmp_path / f"{name}.png", Path(os.environ["REPROKIT_SITE_SCREENSHOTS"]) / f"{name}.png")
