"""Rendering figures of `nox -s bench`: the Markdown, JUnit and badge outputs of 10,000 records (3), a store of
100,000 records loaded and rendered (5), and the site built from the committed store (8)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from reprokit.contrib.bench_recorded import main_run
from reprokit.model import corpus
from reprokit.model.claims import load_claims
from reprokit.model.matrix import load_matrix
from reprokit.model.records import Record
from reprokit.publish import render
from reprokit.publish.pages import ci_artifacts, index_page, report
from reprokit.publish.site import website
from reprokit.store.store import Store
from reprokit.store.views import View, current


def _copies(records: list[Record], n: int) -> list[Record]:
    """n distinct records made from the recorded ones (each copy gets its own dtype, so its own identity)."""
    out: list[Record] = []
    while len(out) < n:
        for rec in records:
            out.append(rec.model_copy(update={"dtype": f"{rec.dtype}-{len(out)}"}))
            if len(out) == n:
                break
    return out


def _render(view, cases) -> None:
    report.render_target(view, cases, "bench")
    index_page.render_index({view.target: view}, cases, {})
    ci_artifacts.junit_xml(view)
    ci_artifacts.badge(view)


def render_10k(root: Path, store_dir: Path) -> None:
    records, head = main_run(store_dir)
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    big = View("cpu", "cases", "bench", _copies([r for r in records if r.case in cases], 10_000), [head])
    start = time.perf_counter()
    _render(big, cases)
    seconds = time.perf_counter() - start
    print(
        f"3. rendering 10,000 records (target report, index, JUnit, badge; not the PNG heatmap): {seconds:.2f} s "
        "(floor: < 2 s)"
    )


def store_100k(root: Path, store_dir: Path) -> None:
    """Figure 5: a store of 100,000 records (copies of the recorded ones, over 4 torch builds) loaded and rendered."""
    records, head = main_run(store_dir)
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp))
        builds = [f"2.{m}.0+cpu" for m in (10, 11, 12, 13)]
        base = [r for r in records if r.case in cases]
        for build in builds:
            copies = [r.model_copy(update={"torch": build}) for r in _copies(base, 25_000)]
            store.merge(copies, [head.model_copy(update={"torch": build})])
        start, cpu_start = time.perf_counter(), time.process_time()
        loaded = store.load("cpu", "cases", outputs=False)  # as `reprokit report` does: tails only for the view
        loaded_at, cpu_loaded = time.perf_counter(), time.process_time()
        newest = current(loaded, "cpu", "cases", "2.13.0")
        assert newest is not None  # the store holds the copies merged above
        view = render.shown(loaded, newest, load_claims(root / "claims.yaml", set(cases)))
        _render(view, cases)
        done, cpu_done = time.perf_counter(), time.process_time()
    print(
        f"5. store of {len(loaded.records):,} records (4 torch builds): load {loaded_at - start:.2f} s, view and "
        f"render {done - loaded_at:.2f} s, total {done - start:.2f} s wall; CPU time of this process: load "
        f"{cpu_loaded - cpu_start:.2f} s, view and render {cpu_done - cpu_loaded:.2f} s (wall exceeds CPU on a busy "
        "machine) (floor: load + render < 2 s)"
    )


def site_build(root: Path, store_dir: Path, repeat: int = 3) -> None:
    """Figure 8: `reprokit site` from the committed store, in this process (as the command runs it), `repeat` times."""
    walls, cpus, files = [], [], 0
    for _ in range(max(repeat, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            start, cpu_start = time.perf_counter(), time.process_time()
            files = len(website.build(root, Path(tmp), load_matrix(root / "matrix.yaml"), Store(store_dir)))
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu_start)
    print(
        f"8. site build time for the committed store: median {statistics.median(walls):.2f} s wall (CPU "
        f"{statistics.median(cpus):.2f} s) over {len(walls)} builds of {files} files (floor: < 5 s)"
    )
