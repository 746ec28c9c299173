"""The claim-judging rules (CONTRIBUTING.md, "Judging a claim"): what validate rejects and how the ledger judges."""

import shutil
from pathlib import Path

import pytest
import yaml
from reprokit.contrib.validate import validate
from reprokit.model.case import Case, load_case
from reprokit.model.claims import Claim
from reprokit.model.corpus import CaseDir
from reprokit.model.schema import InputError
from reprokit.publish.pages import ledger
from reprokit.store.views import View
from support import record

ROOT = Path(__file__).resolve().parents[1]


def repo(tmp_path, case_yaml, scripts=None, claims=None):
    """A minimal repository: the committed matrix.yaml, one case, optionally claims.yaml."""
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    folder = tmp_path / "cases" / "my-case"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(case_yaml)
    for name, text in (scripts or {"repro.py": "print('hi')\n"}).items():
        (folder / name).write_text(text)
    if claims:
        (tmp_path / "claims.yaml").write_text(claims)
    return tmp_path


CASE = """id: my-case
title: a case
category: refactor
article: {{section: "1", claim: something{stance}}}
expect:
  repro: {oracle}
"""


def case(stance=", stance: fails", oracle="{kind: nonzero-exit}"):
    return CASE.format(stance=stance, oracle=oracle)


# ------------------------------------------------------------------ validate: rule 3 (real names)


def test_validate_rejects_an_oracle_naming_a_class_torch_does_not_have(tmp_path):
    problems = validate(repo(tmp_path, case(oracle="{kind: raises, exception: CompileError}")))
    assert len(problems) == 1 and "'CompileError' is no exception class" in problems[0]


def test_validate_rejects_a_dotted_oracle_class_that_does_not_resolve(tmp_path):
    problems = validate(
        repo(tmp_path, case(oracle="{kind: raises, exception: torch._dynamo.exc.UnsupportedNodeError}"))
    )
    assert len(problems) == 1 and "does not resolve" in problems[0]


@pytest.mark.parametrize(
    "name",
    [
        "RuntimeError",
        "Unsupported",
        "torch._dynamo.exc.Unsupported",
        "BackendCompilerFailed",
        "GuardOnDataDependentSymNode",
    ],
)
def test_validate_accepts_classes_that_exist(tmp_path, name):
    assert validate(repo(tmp_path, case(oracle=f"{{kind: raises, exception: {name}}}"))) == []


def test_validate_rejects_a_script_comparing_with_a_class_name_torch_does_not_have(tmp_path):
    script = "try:\n    f()\nexcept Exception as err:\n    assert type(err).__name__ == 'CompileError'\n"
    problems = validate(repo(tmp_path, case(), {"repro.py": script}))
    assert len(problems) == 1 and "repro.py:4: compares a class name with: 'CompileError'" in problems[0]


# ------------------------------------------------------------------ validate: rule 6 (stance)


def test_validate_rejects_a_case_without_a_declared_stance(tmp_path):
    problems = validate(repo(tmp_path, case(stance="")))
    assert len(problems) == 1 and "article.stance: is required" in problems[0]


def test_the_old_defaulted_asserts_field_is_gone(tmp_path):
    path = repo(tmp_path, case(stance=", stance: fails, asserts: failure")) / "cases" / "my-case" / "case.yaml"
    with pytest.raises(InputError, match="article.asserts: is not a known field"):
        load_case(path)


def test_a_measurement_needs_a_bound_and_a_fix_or_a_reason(tmp_path):
    problems = validate(repo(tmp_path, case(stance=", stance: measures")))
    assert len(problems) == 1 and "bound is required with stance: measures" in problems[0]
    shutil.rmtree(tmp_path / "cases")
    problems = validate(repo(tmp_path, case(stance=", stance: measures, bound: ratio <= 0.75")))
    assert len(problems) == 1 and "needs fixed.py or article.no_fix" in problems[0]
    shutil.rmtree(tmp_path / "cases")
    assert (
        validate(repo(tmp_path, case(stance=", stance: measures, bound: ratio <= 0.75, no_fix: a measurement"))) == []
    )


# ------------------------------------------------------------------ validate: rules 2, 4, 7 (claims)


def claims(*rows):
    return "claims:\n" + "".join(f"  - {r}\n" for r in rows)


def test_validate_rejects_two_claims_decided_by_one_variant(tmp_path):
    problems = validate(
        repo(
            tmp_path,
            case(),
            claims=claims(
                '{id: claim-a, section: "1", claim: one, cases: [my-case]}',
                '{id: claim-b, section: "1", claim: two, cases: [my-case]}',
            ),
        )
    )
    assert len(problems) == 1 and "already decides claim 'claim-a'" in problems[0]


def test_validate_rejects_an_article_fix_claim_without_article_fix_py(tmp_path):
    problems = validate(
        repo(
            tmp_path,
            case(),
            claims=claims('{id: claim-a, section: "1", claim: the fix works, cases: [my-case], article_fix: true}'),
        )
    )
    assert len(problems) == 1 and "has no article_fix.py" in problems[0]


def test_validate_rejects_a_hardware_claim_without_hardware(tmp_path):
    problems = validate(
        repo(
            tmp_path,
            case(),
            claims=claims('{id: claim-a, section: "1", claim: "A100 PCIe needs this", cases: [my-case]}'),
        )
    )
    assert len(problems) == 1 and "claim names hardware (A100, PCIe)" in problems[0]


def test_committed_claims_and_cases_pass_validate():
    assert validate(ROOT) == []


# ------------------------------------------------------------------ the ledger


def case_dir(stance="fails", **article):
    text = case(stance=f", stance: {stance}" + "".join(f", {k}: {v}" for k, v in article.items()))
    return {"my-case": CaseDir(case=Case.model_validate(yaml.safe_load(text)), path=Path("/nonexistent/my-case"))}


def rec(verdict, variant="repro", stdout=""):
    return record(case="my-case", variant=variant, verdict=verdict, stdout_tail=stdout)


def claim(**fields):
    return Claim.model_validate({"id": "claim-c", "section": "1", "claim": "x", "cases": ["my-case"], **fields})


@pytest.mark.parametrize(
    "stance, verdict, expected",
    [
        ("fails", "reproduces", ledger.CONFIRMED),
        ("fails", "does-not-reproduce", ledger.REFUTED),
        ("works", "reproduces", ledger.REFUTED),
        ("works", "does-not-reproduce", ledger.CONFIRMED),
        ("measures", "reproduces", ledger.REFUTED),
        ("measures", "does-not-reproduce", ledger.CONFIRMED),
    ],
)
def test_stance_decides_what_a_failing_repro_means(stance, verdict, expected):
    extra = {"bound": "x <= 1", "no_fix": "a measurement"} if stance == "measures" else {}
    assert ledger.judge(claim(), case_dir(stance, **extra), [rec(verdict)])[0] == expected


def test_a_broader_claim_is_partly_tested_with_what_is_missing():
    verdict, detail = ledger.judge(claim(untested="the GradScaler"), case_dir(), [rec("does-not-reproduce")])
    assert verdict == ledger.PARTLY_TESTED and "tested part refuted" in detail and "the GradScaler" in detail


def test_the_articles_fix_is_judged_on_article_fix_runs_only():
    records = [rec("does-not-reproduce"), rec("fix-works", "fixed"), rec("fix-broken", "article_fix")]
    assert ledger.judge(claim(article_fix=True), case_dir(), records) == (ledger.REFUTED, "1 article's fix run(s)")
    assert ledger.judge(claim(), case_dir(), records)[0] == ledger.REFUTED  # the repro, not our fixed.py


def test_a_hardware_claim_is_not_testable_elsewhere_and_names_a_substitute():
    hw = {"needs": "A100 PCIe", "targets": {"a100": "", "h100": "an H200 for the H100"}}
    verdict, detail = ledger.judge(claim(hardware=hw), case_dir(), [rec("reproduces")], target="cpu")
    assert verdict == ledger.NOT_TESTABLE and "A100 PCIe" in detail and "measured here: confirmed" in detail
    assert ledger.judge(claim(hardware=hw), case_dir(), [rec("reproduces")], target="a100")[0] == ledger.CONFIRMED
    verdict, detail = ledger.judge(claim(hardware=hw), case_dir(), [rec("reproduces")], target="h100")
    assert verdict == ledger.CONFIRMED and detail.startswith("on an H200 for the H100")


def test_a_rate_claim_counts_configurations_not_one_cases_exit():
    lines = "\n".join(['FP8_CONFIG {"ok": true}'] * 3 + ['FP8_CONFIG {"ok": false}'])
    sweep = View("h100", "sweep", "2.11.0", [], [])
    c = claim(sweep={"measure": "fp8-cells-failing", "claimed": 0.89})
    verdict, detail = ledger.judge(c, case_dir(), [rec("reproduces", stdout=lines)], sweep)
    assert verdict == ledger.REFUTED and "cases 1/4 configurations, together: 25.0% (1/4)" in detail


def test_a_printed_figure_outside_its_bound_makes_the_claim_mixed():
    figures = [
        {"name": "DDP/single", "printed": r"DDP/single (\d+\.\d+)", "claimed": 1.0, "low": 0.9, "high": 1.1},
        {"name": "FSDP/DDP", "printed": r"FSDP/DDP (\d+\.\d+)", "claimed": 0.33, "high": 0.75},
    ]
    cases = case_dir("measures", bound="'FSDP/DDP <= 0.75'", no_fix="a measurement")
    printed = "ratios DDP/single {} (article 1.00), FSDP/DDP 0.43 (article 0.33)"
    verdict, detail = ledger.judge(
        claim(figures=figures), cases, [rec("does-not-reproduce", stdout=printed.format("1.20"))]
    )
    assert verdict == ledger.MIXED
    assert "DDP/single 1.2 vs the article's 1: outside 0.9 - 1.1" in detail
    assert "FSDP/DDP 0.43 vs the article's 0.33: within <= 0.75" in detail
    ok = ledger.judge(claim(figures=figures), cases, [rec("does-not-reproduce", stdout=printed.format("1.02"))])
    assert ok[0] == ledger.CONFIRMED
    # a run that printed no figure (or a forged, non-numeric one) is judged by its verdict alone
    assert (
        ledger.judge(claim(figures=figures), cases, [rec("does-not-reproduce", stdout="DDP/single x.y")])[0]
        == ledger.CONFIRMED
    )
    with pytest.raises(ValueError, match="needs low and/or high"):
        claim(figures=[{"name": "x", "printed": "(1)", "claimed": 1.0}])


def test_the_committed_ledger_rows_of_the_audit():
    from reprokit.model.claims import load_claims
    from reprokit.model.corpus import discover

    cases = {cd.case.id: cd for cd in discover(ROOT / "cases")}
    claims = {c.id: c for c in load_claims(ROOT / "claims.yaml", set(cases)).claims}
    assert "torch.jit.frontend.UnsupportedNodeError" in claims["dtensor-from-local"].untested
    # the option check fails before any device code: judged on a named substitute on cpu, not "not testable"
    refused = record(case="compile-options-rtx4090-example", verdict="reproduces", status="fail")
    verdict, detail = ledger.judge(claims["rtx4090-example"], cases, [refused], target="cpu")
    assert verdict == ledger.REFUTED and detail.startswith("on a CPU as substitute")
    memory = record(
        case="fsdp-peak-memory-ratios",
        verdict="does-not-reproduce",
        status="pass",
        target="h100",
        stdout_tail="ratios DDP/single 1.20 (article 1.00), FSDP/DDP 0.43 (article 0.33)\n",
    )
    verdict, detail = ledger.judge(claims["memory-table"], cases, [memory], target="h100")
    assert verdict == ledger.PARTLY_TESTED and detail.startswith("tested part mixed")


def test_the_ledger_speaks_one_vocabulary_of_claim_verdicts():
    """judge's verdict is a ClaimVerdict, each has its symbol, and the words printed are the values as before."""
    import json

    from reprokit.publish.pages.ledger import ClaimVerdict

    assert set(ledger.SYMBOL) == set(ClaimVerdict)
    assert [str(v) for v in ClaimVerdict] == [
        "confirmed",
        "refuted",
        "mixed",
        "inconclusive",
        "not testable here",
        "not run",
        "partly tested",
    ]
    assert ledger.record_stance(record(verdict="reproduces"), "fails") is ClaimVerdict.CONFIRMED
    assert ledger.article_fix_stance(record(verdict="fix-broken", variant="article_fix")) is ClaimVerdict.REFUTED
    assert f"{ClaimVerdict.NOT_TESTABLE}" == "not testable here" and json.dumps([ClaimVerdict.MIXED]) == '["mixed"]'
