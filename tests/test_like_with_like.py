"""Like with like: a rate between two releases is compared over the repros recorded (and run) on both; where the
releases ran different sets, the trend says so, and a release's own rate is never read as a step."""

import shutil
from pathlib import Path

from reprokit.model import case_identity, corpus
from reprokit.model.records import RunHeader
from reprokit.publish import render
from reprokit.publish.site import website
from reprokit.publish.site.standing import release_rates, steps
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import history_rows
from support import record

ROOT = Path(__file__).resolve().parents[1]
CASES = ["aot-autograd-backward-inside-compiled-fn", "custom-op-unregistered-gemm", "inductor-cpu-arctan-linalg-cond"]


def repro(case: str, verdict: str, torch: str) -> object:
    return record(
        case=case,
        verdict=verdict,
        torch=torch,
        run_id=torch.replace("+", "-"),
        **({"exception": "RuntimeError", "message": "m", "stage": "inductor"} if verdict == "reproduces" else {}),
    )


def test_the_step_between_two_releases_compares_the_repros_recorded_on_both():
    a, b, c = CASES
    every = {
        "2.14.1": [
            repro(a, "reproduces", "2.14.1+cpu"),
            repro(b, "does-not-reproduce", "2.14.1+cpu"),
            repro(c, "reproduces", "2.14.1+cpu"),
        ],
        "2.15.0": [
            repro(a, "reproduces", "2.15.0+cpu"),
            repro(b, "does-not-reproduce", "2.15.0+cpu"),
            repro(c, "skipped", "2.15.0+cpu"),
        ],
    }  # c did not run on 2.15.0
    cases = corpus.discover(ROOT / "cases")
    own = {r.release: r.any_reason for r in release_rates(every, cases)}
    assert own == {"2.14.1": (2, 3), "2.15.0": (1, 2)}  # 66.7% -> 50.0%: which repros ran, not torch
    step = steps(every, cases)["2.15.0"]
    assert (step.before.any_reason, step.after.any_reason) == ((1, 2), (1, 2))
    assert (step.only_before, step.only_after) == (1, 0)
    assert "over the 2 repros that ran on both 2.14.1 and 2.15.0" in step.text
    assert "any reason 50.0% (1/2) → 50.0% (1/2)" in step.text
    assert "the sets differ (1 ran on 2.14.1 only, 0 on 2.15.0 only)" in step.text
    same = steps({k: v[:2] for k, v in every.items()}, cases)["2.15.0"]
    assert "differ" not in same.text and list(steps(every, cases)) == ["2.15.0"]


def test_the_grid_page_shows_each_step_and_says_where_the_sets_differ(tmp_path):
    root = tmp_path / "repo"
    for case in CASES:
        shutil.copytree(ROOT / "cases" / case, root / "cases" / case)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    a, b, c = CASES
    now = {case: case_identity.content_hash(root / "cases" / case) for case in CASES}
    store = Store(root / "results")
    for torch, verdicts in (
        ("2.14.1+cpu", {a: "reproduces", b: "does-not-reproduce", c: "reproduces"}),
        ("2.15.0+cpu", {a: "reproduces", b: "does-not-reproduce"}),
    ):
        run = torch.replace("+", "-")
        store.merge(
            [repro(case, v, torch).model_copy(update={"case_hash": now[case]}) for case, v in verdicts.items()],
            [RunHeader(run_id=run, target="cpu", torch=torch, device="cpu", reprokit="test", environment={})],
        )
    loaded = Store(root / "results").load()
    published = render.gather(root, load_root_matrix(root), loaded)
    grid = website.pages(
        published, history_rows(loaded, [], None), website.from_git(ROOT), current=website.current_identities(loaded)
    )["grid-cpu.html"]
    step = grid[grid.index('<li data-release="2.15.0" data-sets-differ>') :]
    step = step[: step.index("</li>")]
    assert "2.14.1 → 2.15.0: over the 2 repros that ran on both" in step
    assert "the sets differ (1 ran on 2.14.1 only, 0 on 2.15.0 only)" in step
    assert "where the sets differ, the steps below compare the repros recorded on both" in grid
