"""Observation -> verdict, for every oracle kind."""

import pytest
from reprokit.model.case import Oracle
from reprokit.model.verdict import Verdict, changed
from reprokit.run.execute import Observation
from reprokit.run.outcome import fix_verdict, repro_verdict


def obs(status, exception=None, message=None, stdout="", chain=()):
    probes = [{"exception": exception, "chain": list(chain)}] if exception else []
    return Observation(
        status=status,
        exit_code=0 if status == "pass" else 1,
        signal=None,
        seconds=1.0,
        exception=exception,
        message=message,
        stdout_tail=stdout,
        probes=probes,
    )


RAISES = Oracle(kind="raises", exception="torch._dynamo.exc.Unsupported", match="fake")


@pytest.mark.parametrize(
    "observation, verdict",
    [
        (obs("fail", "torch._dynamo.exc.Unsupported", "no fake impl"), Verdict.REPRODUCES),
        (obs("fail", "torch._dynamo.exc.Unsupported", "something else"), Verdict.FAILS_DIFFERENTLY),
        (obs("fail", "RuntimeError", "no fake impl"), Verdict.FAILS_DIFFERENTLY),
        (obs("pass"), Verdict.DOES_NOT_REPRODUCE),
        (obs("crash"), Verdict.FAILS_DIFFERENTLY),
        (obs("timeout"), Verdict.TIMEOUT),
    ],
)
def test_raises_oracle(observation, verdict):
    assert repro_verdict(RAISES, observation)[0] is verdict


def test_bare_exception_name_matches_any_module_and_the_chain():
    oracle = Oracle(kind="raises", exception="UnsupportedOperatorException")
    seen = obs(
        "fail",
        "torch._dynamo.exc.Unsupported",
        "x",
        chain=["torch._dynamo.exc.Unsupported", "torch._subclasses.fake_tensor.UnsupportedOperatorException"],
    )
    assert repro_verdict(oracle, seen)[0] is Verdict.REPRODUCES


def test_wrong_result_means_an_assertion_failed():
    oracle = Oracle(kind="wrong-result")
    assert repro_verdict(oracle, obs("fail", "AssertionError", "Tensor-likes are not close"))[0] is Verdict.REPRODUCES
    assert repro_verdict(oracle, obs("fail", "RuntimeError", "boom"))[0] is Verdict.FAILS_DIFFERENTLY


def test_hang_oracle():
    oracle = Oracle(kind="hangs")
    assert repro_verdict(oracle, obs("timeout"))[0] is Verdict.REPRODUCES
    assert repro_verdict(oracle, obs("pass"))[0] is Verdict.DOES_NOT_REPRODUCE


def test_stdout_oracle_also_judges_the_fix():
    oracle = Oracle(kind="stdout", match=r"Recompiling function \w+")
    bad = obs("pass", stdout="Recompiling function forward")
    assert repro_verdict(oracle, bad)[0] is Verdict.REPRODUCES
    assert fix_verdict(oracle, bad)[0] is Verdict.FIX_BROKEN
    assert fix_verdict(oracle, obs("pass", stdout="fine"))[0] is Verdict.FIX_WORKS


def test_compare_reports_both_directions_and_new_runs():
    expected = {"a/repro@float32": "reproduces", "b/repro@float32": "does-not-reproduce"}
    observed = {
        "a/repro@float32": "does-not-reproduce",
        "b/repro@float32": "does-not-reproduce",
        "c/repro@float32": "reproduces",
    }
    assert changed(expected, observed) == [
        ("a/repro@float32", "reproduces", "does-not-reproduce"),
        ("c/repro@float32", None, "reproduces"),
    ]


@pytest.mark.parametrize(
    ("message", "headline"),
    [
        (
            "backend='inductor' raised:\nGuardOnDataDependentSymNode: Could not guard\n\nmore",
            "GuardOnDataDependentSymNode: Could not guard",
        ),
        ("  Attempted to wrap RNN\n  Explanation: ...", "Attempted to wrap RNN"),
        ("backend='openxla' raised:", "backend='openxla' raised:"),  # nothing better to show
        (None, ""),
    ],
)
def test_report_headline_skips_backend_wrapper_line(message, headline):
    from support import record

    assert record(message=message).headline() == headline


def _sweep(failing_structures, structures=27, fp8_failing=0):
    from reprokit.store.views import View
    from support import record

    records = []
    for i in range(structures):
        fails = i < failing_structures
        records.append(
            record(
                f"sweep-m{i}",
                "inference-default",
                "float32",
                "reproduces" if fails else "does-not-reproduce",
                suite="sweep",
            )
        )
        records.append(
            record(
                f"sweep-m{i}",
                "inference-default",
                "float8_e4m3fn",
                "reproduces" if i < fp8_failing else "does-not-reproduce",
                suite="sweep",
            )
        )
    records.append(record("sweep-x", "train-default", "float16", "skipped", suite="sweep"))
    return View("t", "sweep", "2.13.0", records, [])


@pytest.mark.parametrize(
    ("failing", "fp8", "measure", "verdict", "detail"),
    [
        (6, 0, "structures-failing", "confirmed", "sweep: 22.2% (6/27) vs 20.0% claimed"),
        (5, 0, "structures-failing", "refuted", "sweep: 18.5% (5/27) vs 20.0% claimed"),
        (0, 27, "fp8-cells-failing", "confirmed", "sweep: 100.0% (27/27) vs 20.0% claimed"),
    ],
)
def test_ledger_judges_a_claimed_rate_by_the_sweep(failing, fp8, measure, verdict, detail):
    from reprokit.model.claims import Claim
    from reprokit.publish.pages import ledger

    claim = Claim(id="rate", section="1", claim="x% fail", sweep={"measure": measure, "claimed": 0.2})
    assert ledger.judge(claim, {}, [], _sweep(failing, fp8_failing=fp8)) == (verdict, detail)
    assert ledger.judge(claim, {}, [], None) == ("not run", "no sweep recorded")


@pytest.mark.parametrize("kind", ["stdout", "raises"])
@pytest.mark.parametrize("pattern, times_out", [("^(a+)+$", False), ("(.*a){30}$", True)])
def test_a_catastrophic_oracle_regex_on_case_output_does_not_hang_the_runner(kind, pattern, times_out):
    import time

    text = "a" * 300 + "!"  # re backtracks for ever on both patterns; regex solves the first, gives up on the second
    oracle = Oracle(kind=kind, match=pattern, **({"exception": "ValueError"} if kind == "raises" else {}))
    start = time.monotonic()
    verdict, why = repro_verdict(oracle, obs("fail", "ValueError", text, stdout=text))
    assert time.monotonic() - start < 30
    assert verdict is Verdict.FAILS_DIFFERENTLY and ("timed out" in why) == times_out
