"""What a run's verdict and its one-line reason say, branch by branch; the gate's printed lines; the views' runs.
Fast and in-process (the mutation session runs these)."""

import pytest
from reprokit.model.case import Oracle
from reprokit.model.records import RunHeader, Sitting
from reprokit.model.schema import InputError
from reprokit.model.verdict import Verdict, tally
from reprokit.run.execute import Observation
from reprokit.run.outcome import fix_verdict, repro_verdict
from reprokit.store import expected
from reprokit.store.store import Loaded
from reprokit.store.views import view_of
from support import record


def seen(status, exit_code=1, exception=None, message=None, stdout="", stderr="", signal=None, chain=()):
    probes = [{"exception": exception, "chain": list(chain)}] if exception else []
    return Observation(
        status=status,
        exit_code=exit_code,
        signal=signal,
        seconds=3.4,
        exception=exception,
        message=message,
        stdout_tail=stdout,
        stderr_tail=stderr,
        probes=probes,
    )


RAISES = Oracle(kind="raises", exception="ValueError", match="bad")


@pytest.mark.parametrize(
    ("oracle", "observation", "verdict", "why"),
    [
        (Oracle(kind="hangs"), seen("timeout"), "reproduces", "still running after 3 s"),
        (Oracle(kind="hangs"), seen("pass", 0), "does-not-reproduce", "finished without hanging"),
        (Oracle(kind="hangs"), seen("crash"), "fails-differently", "expected a hang, got crash"),
        (RAISES, seen("timeout"), "timeout", "killed after 3 s"),
        (Oracle(kind="stdout", match="x+y"), seen("pass", 0, stdout="a\nxxy\n"), "reproduces", "stdout matches 'x+y'"),
        (Oracle(kind="stderr", match="^E"), seen("fail", stderr="a\nEnd"), "reproduces", "stderr matches '^E'"),
        (
            Oracle(kind="stderr", match="^E"),
            seen("fail", stdout="End"),
            "fails-differently",
            "expected output '^E', got fail",
        ),
        (
            Oracle(kind="stdout", match="x"),
            seen("pass", 0, stdout="y"),
            "does-not-reproduce",
            "stdout does not match 'x'",
        ),
        (RAISES, seen("pass", 0), "does-not-reproduce", "ran and exited 0"),
        (Oracle(kind="nonzero-exit"), seen("crash", -11, signal="SIGSEGV"), "reproduces", "crash (exit -11)"),
        (
            RAISES,
            seen("crash", -11, signal="SIGSEGV"),
            "fails-differently",
            "expected an exception, got crash (SIGSEGV)",
        ),
        (RAISES, seen("oom"), "fails-differently", "expected an exception, got oom"),
        (
            RAISES,
            seen("fail", exception="KeyError", message="bad"),
            "fails-differently",
            "expected ValueError, got KeyError",
        ),
        (
            RAISES,
            seen("fail", exception="ValueError", message="good"),
            "fails-differently",
            "ValueError message does not match 'bad'",
        ),
        (RAISES, seen("fail", exception="ValueError", message="so bad"), "reproduces", "ValueError"),
        (Oracle(kind="raises"), seen("fail", 3), "reproduces", "exit 3"),
        (
            Oracle(kind="wrong-result"),
            seen("fail", exception="AssertionError", message="mismatch"),
            "reproduces",
            "AssertionError",
        ),
        (RAISES, seen("fail", 77, stdout="x\nneeds 2 GPUs\n"), "skipped", "the script skipped itself: needs 2 GPUs"),
        (RAISES, seen("fail", 77), "skipped", "the script skipped itself: no reason printed"),
        (RAISES, seen("fail", 77, exception="ValueError", message="bad"), "reproduces", "ValueError"),
        (RAISES, seen("pass", 77, stdout="why"), "does-not-reproduce", "ran and exited 0"),
    ],
)
def test_repro_verdict_and_its_reason(oracle, observation, verdict, why):
    assert repro_verdict(oracle, observation) == (Verdict(verdict), why)


def test_the_exception_chain_counts_for_a_dotted_name_too():
    oracle = Oracle(kind="raises", exception="torch._subclasses.fake_tensor.UnsupportedOperatorException")
    chained = seen(
        "fail",
        exception="torch._dynamo.exc.Unsupported",
        message="m",
        chain=["torch._subclasses.fake_tensor.UnsupportedOperatorException"],
    )
    assert repro_verdict(oracle, chained)[0] is Verdict.REPRODUCES


@pytest.mark.parametrize(
    ("oracle", "observation", "verdict", "why"),
    [
        (RAISES, seen("pass", 0), "fix-works", "ran and exited 0"),
        (RAISES, seen("fail", exception="ValueError"), "fix-broken", "fail: ValueError"),
        (RAISES, seen("crash", -11, signal="SIGSEGV"), "fix-broken", "crash: SIGSEGV"),
        (RAISES, seen("fail", 2), "fix-broken", "fail: exit 2"),
        (RAISES, seen("fail", 77, stdout="no GPU"), "skipped", "the script skipped itself: no GPU"),
        (Oracle(kind="stdout", match="bad"), seen("pass", 0, stdout="bad"), "fix-broken", "stdout still matches 'bad'"),
        (Oracle(kind="stderr", match="bad"), seen("pass", 0, stdout="bad"), "fix-works", "ran and exited 0"),
    ],
)
def test_fix_verdict_and_its_reason(oracle, observation, verdict, why):
    assert fix_verdict(oracle, observation) == (Verdict(verdict), why)


def test_tally_counts_every_kind():
    records = [
        record(case="t", verdict="timeout"),
        record(case="d", verdict="fails-differently"),
        record(case="a", variant="fixed", verdict="skipped"),
        record(case="a", variant="article_fix", verdict="skipped"),
        record(case="b", variant="article_fix", verdict="fix-works"),
    ]
    t = tally(records)
    assert (t.runs, t.repros_run, t.timeout, t.fail_differently) == (5, 2, 1, 1)
    assert (t.fixes_skipped, t.article_fixes_skipped, t.article_fixes_work) == (1, 1, 1)
    assert t.fixes_text() == "0/0 work" and t.article_fixes_text() == "1/1 work"
    assert tally([]).article_fixes_text() == "—"


def _header(run_id, finished, torch="2.13.0+cpu"):
    return RunHeader(
        run_id=run_id,
        target="cpu",
        torch=torch,
        device="cpu",
        environment={"torch": torch},
        sittings=[Sitting(jobs=2, started=finished, finished=finished)],
        reprokit="test",
    )


def test_a_view_lists_the_runs_it_shows_oldest_first_and_their_environment():
    runs = {
        h.run_id: h
        for h in (
            _header("late", "2026-12-02T00:00:00Z"),
            _header("early", "2026-12-01T00:00:00Z"),
            _header("other", "2026-12-03T00:00:00Z", "2.12.0"),
        )
    }
    loaded = Loaded(
        [
            record(case="a", run_id="late"),
            record(case="b", run_id="early"),
            record(case="c", run_id="other", torch="2.12.0"),
        ],
        runs,
    )
    view = view_of(loaded, "cpu", "cases", "2.13.0", pin="2.13.0")
    assert [h.run_id for h in view.runs] == ["early", "late"]
    assert view.header.run_id == "late" and view.environment == {"torch": "2.13.0+cpu"}
    assert [r.case for r in view.records] == ["a", "b"] and view.history == ["2.12.0", "2.13.0"]
    assert view.pin == "2.13.0" and not view.off_pin and view.by_key()["a/repro@float32"].run_id == "late"
    empty = view_of(loaded, "cpu", "sweep", "2.13.0")
    assert empty.records == [] and empty.header is None and empty.environment == {}


def test_the_gate_prints_what_it_found(tmp_path):
    path = expected.expected_path(tmp_path, "cpu", "sweep")
    assert path == tmp_path / "expected" / "cpu-sweep.yaml"
    expected.save(path, {"s/x@float32": Verdict.REPRODUCES, "a/x@float32": Verdict.REPRODUCES})
    text = path.read_text()
    assert text.startswith(expected.HEADER) and text.index("a/x@float32") < text.index("s/x@float32")
    changed = [
        record(case="s", variant="x", verdict="does-not-reproduce", suite="sweep"),
        record(case="n", variant="x", verdict="reproduces", suite="sweep"),
    ]
    gate = expected.check(tmp_path, "cpu", "sweep", "2.13.0", changed)
    assert expected.describe(gate, tmp_path, "cpu", "sweep") == [
        "1 verdicts differ from expected/cpu-sweep.yaml:",
        "  s/x@float32: reproduces -> does-not-reproduce",
        "new: no expected state yet: n/x@float32: reproduces",
        "accept the new state with: reprokit run --target cpu --suite sweep --case n --case s --update-expected",
    ]
    same = expected.check(tmp_path, "cpu", "sweep", "2.13.0", [record(case="a", variant="x", suite="sweep")])
    assert expected.describe(same, tmp_path, "cpu", "sweep") == ["all 1 verdicts match expected/cpu-sweep.yaml"]
    history = expected.check(tmp_path, "cpu", "sweep", "2.13.0", [*changed[:1], record(torch="2.12.0")])
    assert history.release == "2.12.0, 2.13.0" and not history.gated
    old = expected.check(tmp_path, "cpu", "sweep", "2.13.0", [changed[0].model_copy(update={"torch": "2.12.0"})])
    assert expected.describe(old, tmp_path, "cpu", "sweep") == [
        "torch 2.12.0 is not the pinned 2.13.0: recorded as history, not gated by expected/cpu-sweep.yaml",
        "  s/x@float32: reproduces -> does-not-reproduce (vs the pinned release's expected state)",
    ]
    accepted = expected.check(tmp_path, "cpu", "sweep", "2.13.0", changed, update=True)
    assert expected.describe(accepted, tmp_path, "cpu", "sweep") == ["accepted 2 verdicts into expected/cpu-sweep.yaml"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "must map run keys to verdicts"),
        ("a: [unclosed\n", "not valid YAML; restore it with `git checkout"),
    ],
)
def test_a_bad_expected_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "cpu.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        expected.load(path)
    assert expected.load(tmp_path / "missing.yaml") == {}


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
@pytest.mark.parametrize("change", ["first", "middle", "last", "none"])
def test_bisection_finds_the_boundary_within_log2_runs(n, change):
    import math

    from reprokit.contrib.bisection import search

    versions = [f"2.{i}.0" for i in range(n)]
    at = {"first": 1, "middle": n // 2, "last": n - 1, "none": n}[change]
    truth = {v: Verdict.REPRODUCES if i < at else Verdict.DOES_NOT_REPRODUCE for i, v in enumerate(versions)}
    found = search(versions, {}, truth.__getitem__)
    assert len(found.ran) <= math.ceil(math.log2(n)) + 1 and len(set(found.ran)) == len(found.ran)
    if change == "none":
        assert found.boundary() is None
    else:
        assert found.boundary() == (versions[at - 1], versions[at])
        assert f"fixed in {versions[at]}: last bad {versions[at - 1]}, first good {versions[at]}" in found.summary()
        assert f"does not reproduce {versions[at]}" in found.summary()


def test_bisection_uses_recorded_results_and_steps_over_unknown_releases():
    from reprokit.contrib.bisection import search

    versions = ["2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1"]
    truth = {
        "2.8.0": Verdict.REPRODUCES,
        "2.9.1": Verdict.SKIPPED,
        "2.10.0": Verdict.REPRODUCES,
        "2.11.0": Verdict.DOES_NOT_REPRODUCE,
        "2.12.1": Verdict.DOES_NOT_REPRODUCE,
    }
    recorded = {"2.12.1": Verdict.DOES_NOT_REPRODUCE, "2.8.0": Verdict.REPRODUCES}
    found = search(versions, recorded, truth.__getitem__)
    assert found.boundary() == ("2.10.0", "2.11.0") and "2.12.1" not in found.ran and "2.8.0" not in found.ran


def test_the_ledger_says_from_which_release_a_verdict_holds():
    from pathlib import Path

    from reprokit.model import corpus
    from reprokit.model.claims import load_claims
    from reprokit.publish.pages import ledger_page

    root = Path(__file__).resolve().parents[1]
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    claims = load_claims(root / "claims.yaml", set(cases))
    (claim,) = [c for c in claims.claims if c.cases == ["custom-op-unregistered-gemm"] and not c.article_fix]

    def every(*verdicts):
        return {
            f"2.{9 + i}.0": [record(case="custom-op-unregistered-gemm", verdict=v, torch=f"2.{9 + i}.0")]
            for i, v in enumerate(verdicts)
        }

    assert (
        ledger_page.holds_since(claim, cases, every("reproduces", "reproduces"), "cpu", "confirmed")
        == " (holds 2.9.0 – 2.10.0)"
    )
    assert (
        ledger_page.holds_since(
            claim, cases, every("does-not-reproduce", "reproduces", "reproduces"), "cpu", "confirmed"
        )
        == " (since 2.10.0; 2.9.0: refuted)"
    )
    assert ledger_page.holds_since(claim, cases, every("reproduces"), "cpu", "confirmed") == ""


def test_a_partly_tested_claim_whose_tested_part_changes_does_not_hold_across_releases():
    """symbolic-break: both cases reproduce on the older release (tested part confirmed), one of them on the newer
    (tested part mixed); the ledger says since when 'mixed' holds, not that 'partly tested' held all along."""
    from pathlib import Path

    from reprokit.model import corpus
    from reprokit.model.claims import load_claims
    from reprokit.publish.pages import ledger, ledger_page

    root = Path(__file__).resolve().parents[1]
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    (claim,) = [c for c in load_claims(root / "claims.yaml", set(cases)).claims if c.id == "symbolic-break"]

    def release(torch, break_verdict):
        return [
            record(case="type-inference-symbolic-shape-break", verdict=break_verdict, torch=torch),
            record(case="type-inference-symbolic-shape-guard", verdict="reproduces", torch=torch),
        ]

    every = {
        "2.9.1": release("2.9.1", "reproduces"),
        "2.10.0": release("2.10.0", "does-not-reproduce"),
        "2.11.0": release("2.11.0", "does-not-reproduce"),
    }
    verdict, detail = ledger.judge(claim, cases, every["2.11.0"], target="cpu")
    assert verdict == ledger.PARTLY_TESTED and detail.startswith("tested part mixed")
    now = ledger.outcome(claim, cases, every["2.11.0"], target="cpu")
    assert ledger_page.holds_since(claim, cases, every, "cpu", now) == " (since 2.10.0; 2.9.1: tested part confirmed)"


def _sweep_page(runs, records):
    from reprokit.publish.pages.sweep_report import render_target

    loaded = Loaded(records, {h.run_id: h for h in runs})
    return render_target(view_of(loaded, "cpu", "sweep", "2.13.0"), "a CPU", None)


def test_sweep_page_counts_as_missing_only_cells_no_later_run_recorded():
    """A run cut short at its deadline, then a run of the cells it left: nothing is missing; without the second run,
    the page says how many cells are."""

    def head(run_id, finished, planned, not_started):
        return _header(run_id, finished).model_copy(
            update={"suite": "sweep", "planned": planned, "not_started": not_started}
        )

    cells = [record(case=f"sweep-m{i}", suite="sweep", run_id="first", variant="inference-default") for i in range(3)]
    first = head("first", "2026-12-01T00:00:00Z", planned=4, not_started=1)
    assert "**Incomplete:** 1 cells of the grid" in _sweep_page([first], cells)
    later = record(case="sweep-m3", suite="sweep", run_id="later", variant="inference-default")
    page = _sweep_page([first, head("later", "2026-12-02T00:00:00Z", planned=1, not_started=0)], [*cells, later])
    assert "Incomplete" not in page and "4 cells in all" in page and "Added later:" in page


def test_the_headline_claim_is_judged_only_on_a_complete_sweep():
    """reports/README.md sets the article's 63.2% beside a sweep only when every cell of its grid is recorded; a sweep
    cut short is named as not judged, never rated on the cells it happens to have."""
    from reprokit.publish.pages.sweep_report import headline_claim

    def head(run_id, planned, not_started):
        return _header(run_id, "2026-12-01T00:00:00Z").model_copy(
            update={"suite": "sweep", "planned": planned, "not_started": not_started}
        )

    cells = [
        record(
            case=f"sweep-m{i}",
            suite="sweep",
            run_id="first",
            variant="inference-default",
            verdict="reproduces" if i == 0 else "does-not-reproduce",
        )
        for i in range(3)
    ]
    cut = view_of(Loaded(cells, {"first": head("first", 4, 1)}), "cpu", "sweep", "2.13.0")
    assert headline_claim({"cpu": cut})[2] == "- `cpu`: not judged (1 of its cells not recorded)."
    whole = view_of(Loaded(cells, {"first": head("first", 3, 0)}), "cpu", "sweep", "2.13.0")
    (line,) = [ln for ln in headline_claim({"cpu": whole}) if ln.startswith("- `cpu`")]
    assert "all 3 cells of its grid recorded" in line and line.endswith(
        "1 of 3 structures (33.3%) fail at least one cell."
    )


def test_a_change_between_two_given_releases_names_the_untested_ones_between_them():
    """--versions 2.9.1 2.12.1 2.13.0 --no-between, the true fix in 2.11.0: the answer is a span, and the
    recorded-history releases between its ends that no run tested are named, never skipped over."""
    from reprokit.contrib.bisection import candidates, search

    history = ["2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0"]
    truth = {
        v: Verdict.REPRODUCES if v in ("2.8.0", "2.9.1", "2.10.0") else Verdict.DOES_NOT_REPRODUCE for v in history
    }
    given = ["2.9.1", "2.12.1", "2.13.0"]
    only = search(candidates(given, history, between=False), {}, truth.__getitem__)
    also = tuple(v for v in history if v not in given)
    answer = only.answer(also)
    assert (answer.kind, answer.last, answer.first, answer.untested) == (
        "fixed",
        "2.9.1",
        "2.12.1",
        ("2.10.0", "2.11.0"),
    )
    assert "fixed between last bad 2.9.1 and first good 2.12.1; not tested in between: 2.10.0, 2.11.0" in answer.line()
    # By default the history releases between the given ones are searched too: the first good release is exact.
    full = search(candidates(given, history), {}, truth.__getitem__)
    assert full.answer().line() == "fixed in 2.11.0: last bad 2.10.0, first good 2.11.0"


def test_timeouts_make_the_answer_undecided_with_the_retry_never_no_change():
    from reprokit.contrib.bisection import search
    from reprokit.contrib.bisection_answer import Seen

    versions = ["2.9.1", "2.12.1", "2.13.0"]
    truth = {
        "2.9.1": Seen(Verdict.TIMEOUT, "timeout: still running after 90 s"),
        "2.12.1": Seen(Verdict.TIMEOUT, "timeout: still running after 90 s"),
        "2.13.0": Seen(Verdict.DOES_NOT_REPRODUCE, "exit 0"),
    }
    found = search(versions, {}, truth.__getitem__)
    found.timeout = 90
    answer = found.answer()
    assert answer.kind == "undecided" and "no change" not in found.summary()
    assert "2.9.1" in answer.line() and "timed out" in answer.line()
    assert "what the script needs is unknown" in answer.line() and "--timeout 180" not in answer.line()
    # A timeout between the two sides of a change makes that change undecided too.
    mixed = {
        "2.9.1": Seen(Verdict.REPRODUCES),
        "2.12.1": Seen(Verdict.TIMEOUT, "timeout"),
        "2.13.0": Seen(Verdict.DOES_NOT_REPRODUCE),
    }
    found = search(versions, dict(mixed), mixed.__getitem__)
    assert found.answer().kind == "undecided" and found.answer().last == "2.9.1"


def test_a_difference_on_a_machine_dependent_run_is_listed_apart_and_never_fails_the_gate(tmp_path):
    """An entry recorded on another CPU model and marked machine-dependent, or a key two CPU models disagreed on in
    the store, does not fail the run when it differs here; everything else still does, in either direction."""
    path = expected.expected_path(tmp_path, "cpu")
    path.parent.mkdir()
    path.write_text(
        "m/repro@float32: {verdict: reproduces, recorded_on: AMD EPYC, machine_dependent: rounding}\n"
        "k/repro@float32: reproduces\nz/repro@float32: reproduces\n"
    )
    ran = [
        record(case="m", verdict="does-not-reproduce"),
        record(case="k", verdict="does-not-reproduce"),
        record(case="z", verdict="does-not-reproduce"),
    ]
    known = {"k/repro@float32": {"AMD EPYC": "reproduces", "Intel(R) Xeon(R)": "does-not-reproduce"}}
    gate = expected.check(tmp_path, "cpu", "cases", "2.13.0", ran, here="Intel(R) Xeon(R)", known_dependent=known)
    assert [c[0] for c in gate.machine] == ["k/repro@float32", "m/repro@float32"]
    assert gate.changes == [("z/repro@float32", Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE)] and gate.failed
    lines = expected.describe(gate, tmp_path, "cpu", "cases")
    assert (
        "  m/repro@float32: reproduces -> does-not-reproduce: differs from the AMD EPYC record: machine-dependent "
        "(rounding)" in lines
    )
    # On the machine it was recorded on, the note does not excuse a difference.
    same = expected.check(tmp_path, "cpu", "cases", "2.13.0", ran[:1], here="AMD EPYC")
    assert same.failed and not same.machine
    # Accepting keeps the note where the verdict is kept.
    expected.check(tmp_path, "cpu", "cases", "2.13.0", [record(case="k", verdict="reproduces")], update=True)
    assert expected.load_entries(path)["m/repro@float32"][1].recorded_on == "AMD EPYC"


def test_a_hangs_limit_comes_from_what_its_finished_runs_took_and_a_timeout_is_confirmed_longer():
    from pathlib import Path

    from reprokit.model.case import Case
    from reprokit.model.corpus import CaseRun
    from reprokit.run.scheduler import RunOptions, confirm_limit, first_limit

    hang = Case.model_validate(
        {
            "id": "hh",
            "title": "t",
            "category": "diagnosis",
            "requires": {"timeout": 90},
            "expect": {"repro": {"kind": "hangs"}},
        }
    )
    run = CaseRun(hang, Path("repro.py"), "repro", "float32")
    opts = RunOptions(device_kind="cpu", jobs=2)
    assert first_limit(run, opts, "hangs") == 90  # nothing recorded: the declared limit
    opts.durations = {"hh/fixed@float32": 12.0, "hh/repro@float32": 9.0}
    assert first_limit(run, opts, "hangs") == 36  # three times the longest run that finished
    assert confirm_limit(run, opts, "hangs") == 108
    raises = hang.model_copy(update={"expect": hang.expect.model_copy(update={"repro": Oracle(kind="raises")})})
    assert first_limit(CaseRun(raises, Path("repro.py"), "repro", "float32"), opts, "raises") == 90


def _machine_header(run_id, cpu, torch="2.11.0+cu130"):
    return RunHeader(
        run_id=run_id,
        target="cpu",
        torch=torch,
        device="cpu",
        reprokit="test",
        environment={"torch": torch, "collect_env": {"cpu_info": f"Architecture: x86_64\nModel name: {cpu}\n"}},
        sittings=[Sitting(jobs=2, started="2026-12-01T00:00:00Z", finished="2026-12-01T00:00:00Z")],
    )


def test_a_record_from_another_cpu_keeps_the_replaced_verdict_and_is_machine_dependent_never_a_rate_or_a_change(
    tmp_path,
):
    """The store keeps one record per identity: a run on another CPU model replaces the record of the same content
    and keeps that machine's verdict; a disagreement makes it machine-dependent (no rate, no change, marked)."""
    from reprokit.model.attribution import compile_rate
    from reprokit.model.verdict import reproduce_rate
    from reprokit.publish.site.rows import Cell
    from reprokit.store import machines
    from reprokit.store.store import Store
    from reprokit.store.views import version_changes

    store = Store(tmp_path / "results")
    amd, intel = _machine_header("amd", "AMD EPYC 7763"), _machine_header("intel", "Intel(R) Xeon(R) Processor")
    common = {"torch": "2.11.0+cu130", "case_hash": "h1", "stage": "inductor"}
    store.merge([record(case="a", run_id="amd", **common), record(case="b", run_id="amd", **common)], [amd])
    store.merge(
        [
            record(
                case="a", verdict="does-not-reproduce", run_id="intel", recorded_at="2026-12-02T00:00:00Z", **common
            ),
            record(case="b", run_id="intel", recorded_at="2026-12-02T00:00:00Z", **common),
        ],
        [intel],
    )
    loaded = store.load()
    by_case = {r.case: r for r in loaded.records}
    assert by_case["a"].on_other_machines == {"AMD EPYC 7763": "reproduces"} and by_case["a"].machine_dependent
    assert by_case["b"].on_other_machines == {"AMD EPYC 7763": "reproduces"} and not by_case["b"].machine_dependent
    assert machines.machine_dependent(loaded.records, loaded.runs) == {
        "a/repro@float32": {"AMD EPYC 7763": "reproduces", "Intel(R) Xeon(R) Processor": "does-not-reproduce"}
    }
    # rates: b counts, a counts nowhere (as a flaky one); the tally says it apart
    assert reproduce_rate(loaded.records) == (1, 1) and compile_rate(loaded.records, {}) == (1, 1)
    assert tally(loaded.records).machine_dependent == 1
    # a later run on the first machine keeps the second machine's verdict
    store.merge(
        [record(case="a", run_id="amd2", recorded_at="2026-12-03T00:00:00Z", **common)],
        [_machine_header("amd2", "AMD EPYC 7763")],
    )
    again = {r.case: r for r in store.load().records}["a"]
    assert again.on_other_machines == {"Intel(R) Xeon(R) Processor": "does-not-reproduce"} and again.machine_dependent
    # changed content: what the other machine ran was another case, nothing is kept
    store.merge(
        [record(case="a", run_id="intel2", recorded_at="2026-12-04T00:00:00Z", **{**common, "case_hash": "h2"})],
        [_machine_header("intel2", "Intel(R) Xeon(R) Processor")],
    )
    assert {r.case: r for r in store.load().records}["a"].on_other_machines is None
    # between releases, a machine-dependent verdict is never a change
    older = record(case="m", torch="2.10.0+cu128", verdict="reproduces")
    newer = record(
        case="m", verdict="does-not-reproduce", torch="2.11.0+cu130", on_other_machines={"AMD EPYC 7763": "reproduces"}
    )
    assert version_changes(Loaded(records=[older, newer]), "cpu", "cases") == []
    cell = Cell.of(newer)
    assert cell.machines == ("machine-dependent: reproduces on AMD EPYC 7763, same torch and case content")
    assert cell.detail.startswith("machine-dependent: reproduces on AMD EPYC 7763")


def test_the_gate_knows_machine_dependence_only_from_before_the_run():
    """A run on a new CPU model that disagrees with the store is a difference, not a machine-dependent one: what a run
    records never excuses itself; a disagreement the store held before it does."""
    from reprokit.store import machines

    amd, intel = _machine_header("amd", "AMD EPYC 7763"), _machine_header("intel", "Intel(R) Xeon(R) Processor")
    runs = {"amd": amd, "intel": intel}
    new = record(
        case="f",
        variant="fixed",
        verdict="fix-broken",
        run_id="intel",
        torch="2.11.0+cu130",
        on_other_machines={"AMD EPYC 7763": "fix-works"},
    )
    assert machines.machine_dependent([new], runs) == {
        "f/fixed@float32": {"AMD EPYC 7763": "fix-works", "Intel(R) Xeon(R) Processor": "fix-broken"}
    }
    assert machines.machine_dependent([new], runs, this_run="intel") == {}
    known = new.model_copy(
        update={"on_other_machines": {"AMD EPYC 7763": "fix-works", "Intel(R) Xeon(R) Gold": "fix-broken"}}
    )
    assert machines.machine_dependent([known], runs, this_run="intel") == {
        "f/fixed@float32": {"AMD EPYC 7763": "fix-works", "Intel(R) Xeon(R) Gold": "fix-broken"}
    }


def test_a_pages_first_run_names_its_machine_where_the_newest_run_was_made_on_another():
    """The page's "Recorded on" is the newest run's machine; an earlier run made elsewhere (the two-GPU cases kept from
    a pair of H200s when the one-GPU ones were run again on an H100) names its own, the first run's line too."""
    from reprokit.publish.pages.run_facts import run_lines

    def head(run_id, finished, on):
        header = _header(run_id, finished)
        return header.model_copy(update={"sittings": [header.sittings[0].model_copy(update={"on": on})]})

    pair, one = "NVIDIA H200, torch 2.11.0+cu130", "NVIDIA H100 80GB HBM3, torch 2.11.0+cu130"
    records = [record(case="two-gpu", run_id="pair"), record(case="one-gpu", run_id="one")]
    runs = [head("pair", "2026-12-03T00:00:00Z", pair), head("one", "2026-12-06T00:00:00Z", one)]
    first, later = run_lines(view_of(Loaded(records, {h.run_id: h for h in runs}), "cpu", "cases", "2.13.0"))
    assert first.startswith("Run:") and f"on {pair}" in first, first
    assert later.startswith("Added later:") and f"on {one}" in later, later
    same = [head("pair", "2026-12-03T00:00:00Z", one), runs[1]]
    first, _ = run_lines(view_of(Loaded(records, {h.run_id: h for h in same}), "cpu", "cases", "2.13.0"))
    assert " on " not in first, first  # the "Recorded on" line names it already


def test_a_grid_names_the_devices_its_current_records_were_made_on():
    """The h100 grid after the one-GPU cases were run again on an H100: the H100 and the H200 whose records of the
    two-GPU cases stay current, each with its count; a CPU by its model, never the word "cpu"."""
    from reprokit.publish.site.machines import recorded_on

    def head(run_id, finished, device, environment):
        return _header(run_id, finished).model_copy(update={"device": device, "environment": environment})

    runs = [
        head("pair", "2026-12-03T00:00:00Z", "NVIDIA H200", {"device_count": 2}),
        head("one", "2026-12-06T00:00:00Z", "NVIDIA H100 80GB HBM3", {"device_count": 1}),
    ]
    records = [
        record(case="ddp", run_id="pair").model_copy(update={"device": "NVIDIA H200"}),
        *(record(case=f"c{i}", run_id="one").model_copy(update={"device": "NVIDIA H100 80GB HBM3"}) for i in range(3)),
    ]
    view = view_of(Loaded(records, {h.run_id: h for h in runs}), "cpu", "cases", "2.13.0")
    assert recorded_on(view) == ["NVIDIA H100 80GB HBM3 (3 records)", "2 × NVIDIA H200 (1 record)"]
    lscpu = {"collect_env": {"cpu_info": "Architecture: x86_64\nModel name: AMD EPYC 9654\n"}}
    cpu = view_of(
        Loaded([record()], {"r1": head("r1", "2026-12-01T00:00:00Z", "cpu", lscpu)}), "cpu", "cases", "2.13.0"
    )
    assert recorded_on(cpu) == ["AMD EPYC 9654 (1 record)"]
