"""`validate` checks every oracle regex against every release's recorded message of its case: a branch that alone
accepts one release's message while the same exception fails differently on another release is reported."""

from pathlib import Path

from reprokit.contrib.oracle_history import branches, recorded_message_problems
from reprokit.model.case import load_case

ROOT = Path(__file__).resolve().parents[1]


def test_branches_split_at_the_top_level_only():
    assert branches("(?i)unsupported target type|sym_min") == ["(?i)unsupported target type", "(?i)sym_min"]
    assert branches(r"a(b|c)|[|]|d\|e") == ["a(b|c)", "[|]", r"d\|e"]
    assert branches("Unexpected optimization option triton") == ["Unexpected optimization option triton"]


def with_match(case_id: str, match: str):
    yml = ROOT / "cases" / case_id / "case.yaml"
    case = load_case(yml)
    repro = case.expect.repro.model_copy(update={"match": match})
    return yml, case.model_copy(update={"expect": case.expect.model_copy(update={"repro": repro})})


def test_the_loose_sym_min_branch_is_reported_from_the_recorded_messages():
    # the oracle export-sym-min-dynamic had: its sym_min branch accepted 2.14.1's constraint error, which 2.8.0 -
    # 2.13.0 print as min(...) and which the oracle does not match there (fails differently)
    old = with_match("export-sym-min-dynamic", "(?i)unsupported target type|sym_min")
    problems = recorded_message_problems(ROOT, {"export-sym-min-dynamic": old})
    assert problems and all("'(?i)sym_min'" in p and "fails differently" in p for p in problems)
    assert any("torch 2.14.1" in p or "torch 2.15.0" in p for p in problems)
    now = ("cases/export-sym-min-dynamic/case.yaml", load_case(ROOT / "cases/export-sym-min-dynamic/case.yaml"))
    assert recorded_message_problems(ROOT, {"export-sym-min-dynamic": now}) == []
