"""One current record per question: a record of case content that is no longer the case's is superseded (history,
never a page's verdict or a rate's figure), results.json says which records are current, and where two builds of one
release disagree on the case as it is now, the pages show both with the build named."""

import json
import shutil
from pathlib import Path

from reprokit.model import case_identity, corpus
from reprokit.publish import render
from reprokit.publish.site import website
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import build_split, current, history_rows, know_content, releases
from support import record

ROOT = Path(__file__).resolve().parents[1]
CASE = "custom-op-unregistered-gemm"
STALE = "0123456789abcdef"  # a case content that is not the case's now


def two_contents_two_builds(tmp_path: Path) -> tuple[Path, str]:
    """A repository of one case with records on cpu: 2.13.0 as two builds, +cpu of an earlier content (reproduces)
    and +cu130 of the content now (does not reproduce); 2.14.1 as two builds, both of the content now, that
    disagree (+cpu reproduces, +cu130 does not)."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    now = case_identity.content_hash(root / "cases" / CASE)
    fail = dict(status="fail", exception="torch._dynamo.exc.Unsupported", message="unsupported op", stage="dynamo")
    ok = dict(status="pass", why="ran and exited 0")
    Store(root / "results").merge(
        [
            record(
                case=CASE, torch="2.13.0+cpu", case_hash=STALE, recorded_at="2026-12-01T02:00:00Z", run_id="a", **fail
            ),
            record(
                case=CASE,
                torch="2.13.0+cu130",
                case_hash=now,
                verdict="does-not-reproduce",
                recorded_at="2026-12-01T01:00:00Z",
                run_id="b",
                **ok,
            ),
            record(
                case=CASE, torch="2.14.1+cpu", case_hash=now, recorded_at="2026-12-01T03:00:00Z", run_id="c", **fail
            ),
            record(
                case=CASE,
                torch="2.14.1+cu130",
                case_hash=now,
                verdict="does-not-reproduce",
                recorded_at="2026-12-01T04:00:00Z",
                run_id="d",
                **ok,
            ),
        ]
    )
    return root, now


def test_superseded_records_leave_views_and_rates(tmp_path):
    root, now = two_contents_two_builds(tmp_path)
    shutil.copytree(root / "results", tmp_path / "out" / "results")
    loaded = Store(tmp_path / "out" / "results").load()  # an --out store: no corpus beside it
    # without the corpus' content every record counts: the newer, stale +cpu record wins 2.13.0
    assert loaded.content == {} and [r.torch for r in releases(loaded, "cpu", "cases")["2.13.0"]] == ["2.13.0+cpu"]
    know_content(loaded, corpus.discover(root / "cases"))
    assert loaded.content == {CASE: now} == Store(root / "results").load().content  # beside its corpus: known
    shown = releases(loaded, "cpu", "cases")
    assert [(r.torch, str(r.verdict)) for r in shown["2.13.0"]] == [("2.13.0+cu130", "does-not-reproduce")]
    assert current(loaded, "cpu", "cases", "2.13.0").rate == (0, 1)
    split = build_split(loaded, "cpu", "cases")
    assert list(split) == [("2.14.1", f"{CASE}/repro@float32")]  # 2.13.0's builds are of two contents: no split
    assert [r.torch for r in split[("2.14.1", f"{CASE}/repro@float32")]] == ["2.14.1+cu130", "2.14.1+cpu"]


def test_pages_show_current_records_and_both_disagreeing_builds(tmp_path):
    root, now = two_contents_two_builds(tmp_path)
    loaded = Store(root / "results").load()
    published = render.gather(root, load_root_matrix(root), loaded)
    site = website.pages(
        published, history_rows(loaded, [], None), website.from_git(ROOT), current=website.current_identities(loaded)
    )
    data = {(e["torch"], e["case_hash"]): e["current"] for e in json.loads(site["results.json"])}
    assert data == {
        ("2.13.0+cpu", STALE): False,
        ("2.13.0+cu130", now): True,
        ("2.14.1+cpu", now): True,
        ("2.14.1+cu130", now): True,
    }
    assert json.loads(site["results.schema.json"])["items"]["properties"]["current"]["type"] == "boolean"
    matrix = site["matrix.html"]
    assert "build 2.14.1+cpu" in matrix and "build 2.14.1+cu130" in matrix  # a row per disagreeing build
    assert "build 2.13.0" not in matrix  # one current record: one row, no build named
    page = site[f"cases/{CASE}.html"]
    assert "build 2.14.1+cpu" in page and "build 2.14.1+cu130" in page
    grid = site["grid-cpu.html"]
    cell = grid[grid.index(f'id="{CASE}/cpu/2.13.0"') :]
    cell = cell[: cell.index("</td>")]
    assert "does-not-reproduce" in cell and "v-reproduces" not in cell  # the stale +cpu verdict is history
    cell = grid[grid.index(f'id="{CASE}/cpu/2.14.1"') :]
    cell = cell[: cell.index("</td>")]
    assert "fails +cpu: reproduces" in cell and "works +cu130: does-not-reproduce" in cell  # the column is the release
    assert '<span class="verdict v-reproduces">fails +cpu</span>' in cell  # the word, never colour alone
    out = tmp_path / "reports"
    render.write_all(root, out, load_root_matrix(root), Store(root / "results").load())
    report = (out / "cpu.md").read_text()
    assert "Builds of 2.14.1 that disagree" in report
    assert "reproduces on 2.14.1+cpu" in report and "does-not-reproduce on 2.14.1+cu130" in report
