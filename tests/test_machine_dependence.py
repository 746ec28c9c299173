"""A machine difference is never a change anywhere: a store where two CPU models disagree on #150114's repro (AMD EPYC
reproduces on every release, the Intel Xeon never; the store's newest record per release from either machine) is
built into every report and the site, and no change list, feed entry, 'since', history line, grid word or mark calls
it regressed or fixed; the upstream table has a row per machine. A real fix on the same releases is still a change."""

import re
import shutil
from pathlib import Path

import pytest
from reprokit.model import case_identity
from reprokit.model.records import RunHeader, Sitting
from reprokit.model.verdict import is_change
from reprokit.publish import render
from reprokit.publish.site import website
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import history_rows, since_or_fixed, version_changes
from support import record

ROOT = Path(__file__).resolve().parents[1]
BY_MACHINE = "inductor-cpu-arctan-linalg-cond"  # links pytorch/pytorch#150114
FIXED = "aot-autograd-backward-inside-compiled-fn"  # fixed in 2.15.0 on both machines: a change
RELEASES = {"2.13.0": "2.13.0+cpu", "2.14.1": "2.14.1+cu130", "2.15.0": "2.15.0+cu132"}
EPYC, XEON = "AMD EPYC 7763", "Intel(R) Xeon(R) Processor"


def header(run_id: str, cpu: str, torch: str) -> RunHeader:
    return RunHeader(
        run_id=run_id,
        target="cpu",
        torch=torch,
        device="cpu",
        reprokit="test",
        environment={"torch": torch, "collect_env": {"cpu_info": f"Model name: {cpu}\n"}},
        sittings=[Sitting(jobs=2, started="2026-12-01T00:00:00Z", finished="2026-12-01T00:00:00Z")],
    )


@pytest.fixture(scope="module")
def two_cpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("machines") / "repo"
    for case in (BY_MACHINE, FIXED):
        shutil.copytree(ROOT / "cases" / case, root / "cases" / case)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    store = Store(root / "results")
    for n, (release, torch) in enumerate(RELEASES.items()):
        # on 2.14.1 the EPYC run is the newer one (the store shows its record), elsewhere the Xeon's
        order = [(EPYC, "reproduces"), (XEON, "does-not-reproduce")]
        for m, (cpu, verdict) in enumerate(reversed(order) if release == "2.14.1" else order):
            run = f"{release}-{cpu.split()[0].strip('(R)')}"
            when = f"2026-12-0{n + 1}T0{m}:00:00Z"
            fixed_now = release == "2.15.0"
            store.merge(
                [
                    record(
                        case=BY_MACHINE,
                        torch=torch,
                        verdict=verdict,
                        run_id=run,
                        recorded_at=when,
                        stage="inductor",
                        case_hash=case_identity.content_hash(root / "cases" / BY_MACHINE),
                        **(
                            {"exception": "AssertionError", "message": "Tensor-likes are not close!"}
                            if verdict == "reproduces"
                            else {}
                        ),
                    ),
                    record(
                        case=FIXED,
                        torch=torch,
                        verdict="does-not-reproduce" if fixed_now else "reproduces",
                        run_id=run,
                        recorded_at=when,
                        case_hash=case_identity.content_hash(root / "cases" / FIXED),
                        **({} if fixed_now else {"exception": "RuntimeError", "message": "mirrored meta"}),
                    ),
                ],
                [header(run, cpu, torch)],
            )
    return root


@pytest.fixture(scope="module")
def built(two_cpus, tmp_path_factory):
    loaded = Store(two_cpus / "results").load()
    published = render.gather(two_cpus, load_root_matrix(two_cpus), loaded)
    site = website.pages(
        published, history_rows(loaded, [], None), website.from_git(ROOT), current=website.current_identities(loaded)
    )
    out = tmp_path_factory.mktemp("reports")
    render.write_all(two_cpus, out, load_root_matrix(two_cpus), Store(two_cpus / "results").load())
    return published, site, {p.name: p.read_text() for p in out.glob("*.md")}


def test_the_store_holds_the_disagreement_on_every_release(built):
    published, _, _ = built
    shown = {rel: next(r for r in recs if r.case == BY_MACHINE) for rel, recs in published.histories["cpu"].items()}
    assert {rel: str(r.verdict) for rel, r in shown.items()} == {
        "2.13.0": "does-not-reproduce",
        "2.14.1": "reproduces",
        "2.15.0": "does-not-reproduce",
    }
    assert all(r.machine_dependent for r in shown.values())
    assert not is_change(shown["2.13.0"], shown["2.14.1"]) and not is_change(shown["2.14.1"], shown["2.15.0"])


def test_no_change_list_names_it_and_the_real_fix_is_listed(built, two_cpus):
    published, site, reports = built
    assert [k for k, *_ in published.changes["cpu"]] == [f"{FIXED}/repro@float32"]
    for release in RELEASES:
        assert f"{BY_MACHINE}/repro@float32" not in since_or_fixed(published.histories["cpu"], release)
    assert since_or_fixed(published.histories["cpu"], "2.15.0") == {f"{FIXED}/repro@float32": "fixed in 2.15.0"}
    for page in ("changes.html", "changes-2.14.1.html", "changes-2.15.0.html", "feed.xml"):
        assert BY_MACHINE not in site[page], page
        assert "150114" not in site[page], page
    assert FIXED in site["changes-2.15.0.html"] and FIXED in site["feed.xml"]


def test_no_report_says_since_or_fixed_of_it(built):
    _, _, reports = built
    cpu = reports["cpu.md"]
    rows = [line for line in cpu.splitlines() if BY_MACHINE in line]
    assert rows and not any(re.search(r"since \d|fixed in \d", line) for line in rows), rows
    changes = cpu[cpu.index("## Changes between torch releases") :]
    assert BY_MACHINE not in changes and FIXED in changes
    history = [line for line in reports["cpu-history.md"].splitlines() if f"{BY_MACHINE}`" in line]
    assert history and all(
        line.count("⇄ by machine") == 3 and "✖" not in line for line in history if "repro@" in line
    ), history


def test_the_upstream_table_has_a_row_per_machine(built):
    _, _, reports = built
    rows = [line for line in reports["upstream-issues.md"].splitlines() if BY_MACHINE in line]
    assert len(rows) == 2, rows
    assert any(f"cpu on {EPYC}" in row and "2.13.0–2.15.0" in row for row in rows)
    assert any(f"cpu on {XEON}" in row and "none recorded" in row for row in rows)


def test_the_grid_shows_one_word_for_every_release_and_filters_on_each_machine(built):
    _, site, _ = built
    grid = site["grid-cpu.html"]
    for release in RELEASES:
        cell = grid[grid.index(f'id="{BY_MACHINE}/cpu/{release}"') :]
        cell = cell[: cell.index("</td>")]
        assert '<span class="verdict v-machine-dependent">by machine</span>' in cell, cell
        assert "Δ" not in cell and "changed" not in cell.split(">", 1)[0]
        assert f"reproduces on {EPYC}" in cell and f"does-not-reproduce on {XEON}" in cell
    row = grid[grid.rindex("<tr", 0, grid.index(f'id="{BY_MACHINE}/cpu/2.15.0"')) :]
    row = row[: row.index(">")]
    assert "2.15.0=reproduces" in row and "2.15.0=does-not-reproduce" in row and "2.15.0=machine-dependent" in row
    fixed = grid[grid.index(f'id="{FIXED}/cpu/2.15.0"') :]
    assert "Δ" in fixed[: fixed.index("</td>")]  # a real change keeps its mark


def test_compare_counts_it_as_no_difference(built):
    published, site, _ = built
    from reprokit.publish.site.compare import DIFFER, compare, comparison

    found = comparison(published)
    for a, b in (("2.13.0", "2.14.1"), ("2.14.1", "2.15.0"), ("2.13.0", "2.15.0")):
        rows = {r.case: r.differs for r in compare(found.verdicts, f"cpu@{a}", f"cpu@{b}")}
        assert rows[BY_MACHINE] != DIFFER and rows[FIXED] == (DIFFER if b == "2.15.0" else "no"), (a, b)


def test_since_or_fixed_never_starts_at_a_machine_dependent_release():
    older = record(case="m", torch="2.13.0+cpu", verdict="reproduces", on_other_machines={EPYC: "does-not-reproduce"})
    newer = [record(case="m", torch=f"{rel}+cpu", verdict="does-not-reproduce") for rel in ("2.14.1", "2.15.0")]
    every = {"2.13.0": [older], "2.14.1": [newer[0]], "2.15.0": [newer[1]]}
    assert since_or_fixed(every, "2.15.0") == {}
    assert version_changes.__doc__  # the views' change list asks verdict.is_change as well
