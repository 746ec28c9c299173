"""One typed definition per vocabulary (issue 52's follow-up): a run's status, a triage's standing and the keeper's
config and report are each one type, compared by member, never by the words that render them; and what is stored
(records, issue-states.yaml, the keeper's JSON) reads as it did before the types."""

import json
from pathlib import Path

import pytest
from reprokit.model.records import Record, RunStatus, dump, parse_record
from reprokit.model.schema import InputError
from reprokit.run.execute import _classify

ROOT = Path(__file__).resolve().parent.parent


def _record(**fields) -> dict:
    return {"target": "cpu", "torch": "2.13.0+cpu", "device": "cpu", "case": "c", "variant": "repro",
            "dtype": "float32", "verdict": "reproduces", "why": "w", "run_id": "r", "recorded_at": "t", "reprokit": "1",
            **fields}


def test_a_status_outside_the_vocabulary_is_refused():
    """Before the enum any string was a status (a typo in an imported record was stored and compared as it came)."""
    with pytest.raises(InputError, match="status"):
        parse_record(json.dumps(_record(status="passed")), "x.jsonl:1")
    assert parse_record(json.dumps(_record(status="over-budget")), "x").status is RunStatus.OVER_BUDGET


def test_the_status_renders_and_stores_as_its_value():
    rec = Record.model_validate(_record(status="fail", ladder={"eager": "pass", "default": "fail"}))
    assert rec.status is RunStatus.FAIL and rec.ladder == {"eager": RunStatus.PASS, "default": RunStatus.FAIL}
    assert (f"{rec.status}", str(rec.status), json.dumps(rec.status)) == ("fail", "fail", '"fail"')
    assert rec.model_dump(mode="json")["ladder"] == {"eager": "pass", "default": "fail"}


def test_the_runner_classifies_with_the_enum():
    obs = _classify(0, False, 1.0, [], 1, "", 0, "", 0)
    assert obs.status is RunStatus.PASS
    assert _classify(None, True, 1.0, [], 1, "", 0, "", 0).status is RunStatus.TIMEOUT
    assert _classify(-9, False, 1.0, [], 1, "", 0, "", 0).status is RunStatus.CRASH


def test_committed_records_read_and_store_as_before():
    """Every committed record reads, and the store's `dump` writes each field it had as it had it (the status as the
    same bytes: `"status": "pass"`)."""
    for path in sorted((ROOT / "results").rglob("*.jsonl")):
        if path.name.endswith((".runs.jsonl", ".output.jsonl")):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            stored, written = json.loads(line), dump(parse_record(line, f"{path}:{n}"))
            assert {k: v for k, v in json.loads(written).items() if k in stored} == stored, f"{path}:{n}"
            if stored.get("status"):
                assert f'"status": {json.dumps(stored["status"])}' in written
