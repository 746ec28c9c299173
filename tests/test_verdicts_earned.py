"""Every verdict earned: two rates never mixed (torch.compile's failures apart from failures for any reason), flaky
repros caught by repeated runs and never reported as a fix or a regression, oracles that torch's boilerplate cannot
satisfy, and wrong-result repros that seed their data."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from reprokit.contrib.oracle_checks import oracle_problems, unseeded_random
from reprokit.model import case_identity, corpus
from reprokit.model.attribution import COMPILE_STAGES, compile_failure, compile_rate
from reprokit.model.case import Case, load_case
from reprokit.model.verdict import Verdict, reproduce_rate
from reprokit.run.request import load_root_matrix
from reprokit.run.scheduler import RunOptions, _more_runs
from reprokit.store.store import Store
from reprokit.store.views import current, know_content, since_or_fixed, version_changes
from support import record

ROOT = Path(__file__).resolve().parents[1]
NOT_COMPILE = (
    "fusion-article-is-fusable",
    "compile-options-rtx4090-example",
    "compile-options-flag-table",
    "diagnosis-output-graph-hook",
    "backend-fallback-chain",
    "ddp-recompile-dynamic",
    "dynamic-shape-mark-dynamic-matmul-coerced",
    "hw-h100-fp16-triton-max-autotune",
)


def case(**fields) -> Case:
    return Case.model_validate(
        {"id": "cc", "title": "t", "category": "diagnosis", "expect": {"repro": {"kind": "nonzero-exit"}}, **fields}
    )


def test_no_failure_outside_the_compile_stack_enters_the_compile_rate():
    plain, documented = case(), case(documented="https://pytorch.org/docs/main/compile/programming_model.html")
    invalid = case(outside_compile={"kind": "invalid-usage", "why": "an option torch never had"})
    records = [
        record(case="in-dynamo", stage="dynamo"),
        record(case="own-code", stage="runtime"),
        record(case="in-ddp", stage="distributed"),
        record(case="documented", stage="dynamo"),
        record(case="invalid", stage="inductor"),
        record(case="eager-ok", verdict="does-not-reproduce"),
        record(case="noise", verdict="flaky", stage="inductor"),
    ]
    cases = {
        "in-dynamo": plain,
        "own-code": plain,
        "in-ddp": plain,
        "documented": documented,
        "invalid": invalid,
        "eager-ok": plain,
        "noise": plain,
    }
    assert [r.case for r in records if compile_failure(r, cases[r.case])] == ["in-dynamo"]
    assert compile_rate(records, cases) == (1, 6)  # the flaky repro is in neither rate
    assert reproduce_rate(records) == (5, 6)


def test_the_committed_cpu_view_counts_none_of_the_named_non_compile_failures():
    matrix = load_root_matrix(ROOT)
    found = corpus.discover(ROOT / "cases")
    cases = {c.case.id: c.case for c in found}
    view = current(
        know_content(Store(ROOT / "results").load("cpu", "cases", outputs=False), found),
        "cpu",
        "cases",
        matrix.targets["cpu"].pins.torch,
    )
    for documented in ("ddp-recompile-dynamic", "dynamic-shape-mark-dynamic-matmul-coerced"):
        assert cases[documented].documented and documented in {r.case for r in view.records}
    counted = [r for r in view.records if compile_failure(r, cases.get(r.case))]
    assert counted and all(r.stage in COMPILE_STAGES for r in counted)
    assert not {r.case for r in counted} & set(NOT_COMPILE)
    hit, total = compile_rate(view.records, cases)
    assert (hit, total) != reproduce_rate(view.records) and total == reproduce_rate(view.records)[1]
    index = (ROOT / "reports" / "README.md").read_text()
    assert "torch.compile failures only" in index and f"({hit}/{total})" in index


def test_a_change_is_run_again_before_it_is_recorded_and_repeat_asks_for_more_runs():
    key = "c/repro@float32"
    run = SimpleNamespace(key=key)
    opts = lambda **kw: RunOptions(device_kind="cpu", jobs=1, **kw)  # noqa: E731
    assert _more_runs(run, Verdict.REPRODUCES, opts(previous={key: Verdict.DOES_NOT_REPRODUCE})) == 1
    assert _more_runs(run, Verdict.REPRODUCES, opts(previous={key: Verdict.REPRODUCES})) == 0
    assert _more_runs(run, Verdict.REPRODUCES, opts(previous={key: Verdict.FLAKY})) == 0
    assert _more_runs(run, Verdict.REPRODUCES, opts(previous={key: Verdict.SKIPPED})) == 0
    assert _more_runs(run, Verdict.REPRODUCES, opts()) == 0
    assert _more_runs(run, Verdict.DOES_NOT_REPRODUCE, opts(repeat=6)) == 5
    assert _more_runs(run, Verdict.SKIPPED, opts(repeat=6)) == 0


HALF_THE_TIME = """import os
import torch

# An unseeded wrong result: the comparison holds only for some draws (about one run in two).
x = torch.randn(1)
assert (x > 0).item(), "wrong sign"
print("ok")
"""


@pytest.mark.e2e
def test_an_unseeded_repro_that_fails_half_the_time_is_recorded_flaky_and_never_as_a_fix(tmp_path):
    root = tmp_path / "repo"
    folder = root / "cases" / "coin-flip"
    folder.mkdir(parents=True)
    (root / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    (folder / "case.yaml").write_text(
        "id: coin-flip\ntitle: t\ncategory: diagnosis\nexpect:\n  repro: {kind: wrong-result}\n"
    )
    (folder / "repro.py").write_text(HALF_THE_TIME)
    assert any("no seed" in p for p in oracle_problems(folder / "case.yaml", load_case(folder / "case.yaml")))
    for attempt in range(3):  # six runs of a fair coin all agree 1 time in 32: three tries make it 1 in 32,768
        out = tmp_path / f"out{attempt}"
        subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "reprokit",
                "--root",
                str(root),
                "run",
                "--host",
                "--target",
                "cpu",
                "--repeat",
                "6",
                "--out",
                str(out),
                "--no-report",
                "--jobs",
                "2",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
            env=os.environ.copy(),
        )
        rec = Store(out / "results").load().records[0]
        failed = rec.repeats["failed"] if rec.repeats else None
        assert rec.repeats and rec.repeats["runs"] == 6
        if 0 < failed < 6:
            break
        assert rec.verdict is (Verdict.REPRODUCES if failed == 6 else Verdict.DOES_NOT_REPRODUCE)
    assert rec.verdict is Verdict.FLAKY and rec.why == (
        f"flaky: reproduced in {failed} of 6 runs (first: {rec.why.split('first: ')[1].split(';')[0]}; also: "
        + rec.why.split("also: ")[1]
    )
    # a history in which the flaky run follows a release that reproduced: no change, no "fixed in"
    store = Store(tmp_path / "history")
    store.merge(
        [
            record(case="coin-flip", torch="2.12.1+cpu", verdict="reproduces"),
            rec.model_copy(update={"torch": "2.13.0+cpu"}),
        ]
    )
    loaded = store.load()
    assert version_changes(loaded, "cpu", "cases") == []
    every = {"2.12.1": [loaded.records[0]], "2.13.0": [loaded.records[1]]}
    assert since_or_fixed(every, "2.13.0") == {}


def test_validate_refuses_an_oracle_that_torchs_boilerplate_satisfies(tmp_path):
    folder = tmp_path / "cases" / "cc"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text("import torch\n")
    for match, refused in (
        ("(?i)fake|meta", True),
        ("pytorch\\.org", True),
        ("TORCHDYNAMO_VERBOSE", True),
        ("Operator does not support running with fake tensors", False),
    ):
        (folder / "case.yaml").write_text(
            f"id: cc\ntitle: t\ncategory: custom-op\nexpect:\n  repro: "
            f"{{kind: raises, exception: RuntimeError, match: {json.dumps(match)}}}\n"
        )
        problems = oracle_problems(folder / "case.yaml", load_case(folder / "case.yaml"))
        assert bool(problems) is refused, (match, problems)


def test_a_seeded_wrong_result_repro_is_not_flagged(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text(HALF_THE_TIME.replace("x = torch.randn(1)", "torch.manual_seed(0)\nx = torch.randn(1)"))
    assert unseeded_random(script) is None
    script.write_text(HALF_THE_TIME)
    assert unseeded_random(script) == 5


def test_the_audit_rows_read_as_the_cases_now_say():
    found = {c.case.id: c for c in corpus.discover(ROOT / "cases")}
    assert (
        found["ddp-recompile-dynamic"].case.documented
        and found["dynamic-shape-mark-dynamic-matmul-coerced"].case.documented
    )
    assert found["hw-h100-fp16-triton-max-autotune"].case.outside_compile.kind == "invalid-usage"
    oracles = {cid: cd.case.expect.repro for cid, cd in found.items()}
    # the FSDP order cases name the claimed failure: no torch prints it, so another failure is never the claim's
    assert {cid for cid, o in oracles.items() if "Param not managed" in (o.match or "")} == {
        "fsdp-shard-compile-order",
        "fsdp1-compile-order",
    }
    assert oracles["export-sym-min-dynamic"].match == "(?i)unsupported target type"
    assert "|triton" not in oracles["hw-h100-fp16-triton-max-autotune"].match
    for bf16 in (
        "inductor-cpu-bf16-rope-dynamic",
        "inductor-cuda-bf16-logsoftmax-gather",
        "inductor-cuda-matmul-bf16-cast-add",
    ):
        assert "float64 reference" in (found[bf16].path / "repro.py").read_text()
    view = current(Store(ROOT / "results").load("cpu", "cases", outputs=False), "cpu", "cases", "2.14.1")
    shown = view.by_key()
    assert shown["export-sym-min-dynamic/repro@float32"].verdict is Verdict.FAILS_DIFFERENTLY
    assert shown["export-sym-min-dynamic/repro@float32"].case_hash == case_identity.content_hash(
        found["export-sym-min-dynamic"].path
    )
