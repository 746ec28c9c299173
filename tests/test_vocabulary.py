"""One typed definition per vocabulary (issue 52's follow-up): a run's status, a triage's standing and the keeper's
config and report are each one type, compared by member, never by the words that render them; and what is stored
(records, issue-states.yaml, the keeper's JSON) reads as it did before the types."""

import json
import sys
from pathlib import Path

import pytest
from reprokit.model.records import Record, RunStatus, dump, parse_record
from reprokit.model.schema import InputError
from reprokit.run.execute import _classify
from support import committed_files

ROOT = Path(__file__).resolve().parent.parent


def _record(**fields) -> dict:
    return {
        "target": "cpu",
        "torch": "2.13.0+cpu",
        "device": "cpu",
        "case": "c",
        "variant": "repro",
        "dtype": "float32",
        "verdict": "reproduces",
        "why": "w",
        "run_id": "r",
        "recorded_at": "t",
        "reprokit": "1",
        **fields,
    }


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
    for path in committed_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            stored, written = json.loads(line), dump(parse_record(line, f"{path}:{n}"))
            assert {k: v for k, v in json.loads(written).items() if k in stored} == stored, f"{path}:{n}"
            if stored.get("status"):
                assert f'"status": {json.dumps(stored["status"])}' in written


OLDER_ENTRIES = """issues:
  1:
    state: closed
    checked: '2026-12-01'
    triage: 'still reproduces on torch 2.12.0..2.14.1 (newest run: 2.14.1): raises X [signature on torch 2.11.0: X]'
    triage_torch: 2.12.0
  2:
    state: open
    checked: '2026-12-01'
    triage: 'fails differently (on torch 2.13.0: raises X; on torch 2.14.1: raises Y)'
    triage_torch: 2.13.0
  3:
    state: open
    checked: '2026-12-01'
    triage: 'no longer reproduces on any release run (2.14.1); the issue is closed: no comment'
    triage_torch: 2.14.1
    triage_kind: no longer reproduces
  4:
    state: open
    checked: '2026-12-01'
"""


def test_an_entry_written_before_kinds_is_read_as_data_once_and_saved_with_it(tmp_path):
    from reprokit.model import issue_states
    from reprokit.model.issue_states import StandingKind

    (tmp_path / "issue-states.yaml").write_text(OLDER_ENTRIES)
    read = issue_states.load(tmp_path).issues
    assert (read[1].triage_kind, read[1].triage_releases) == (StandingKind.STILL, ["2.12.0", "2.14.1"])
    assert (read[2].triage_kind, read[2].triage_releases) == (StandingKind.DIFFERENT, ["2.14.1"])
    assert (read[3].triage_kind, read[3].triage_releases) == (StandingKind.NO_LONGER, ["2.14.1"])
    assert (read[4].triage_kind, read[4].triage_releases) == (None, None)  # never triaged: nothing to read
    issue_states.save(tmp_path, issue_states.IssueStates(issues=read))
    written = (tmp_path / "issue-states.yaml").read_text()
    assert "triage_kind: still reproduces\n    triage_releases:\n    - 2.12.0\n    - 2.14.1\n" in written
    assert issue_states.load(tmp_path).issues == read


def test_the_tracker_decides_by_the_kind_not_by_the_sentence():
    """A sentence reworded since it was recorded (or one that begins with another standing's words) decides
    nothing: `reprokit tracker` holds a comment only where the kind kept as data disagrees with the case."""
    from reprokit.model.issue_states import IssueState, StandingKind
    from reprokit.tracker.linked import Linked, _held

    item = Linked(None, 7, "closed", "2026-12-01", {}, StandingKind.STILL)
    reworded = IssueState(
        state="closed",
        checked="2026-12-01",
        triage="the issue's script still fails the same way",
        triage_torch="2.14.1",
        triage_kind=StandingKind.STILL,
        triage_releases=["2.14.1"],
    )
    assert _held(item, reworded).kind is StandingKind.STILL and _held(item, reworded).held is None
    misleading = reworded.model_copy(
        update={"triage": "still reproduces? no: it passes on 2.14.1", "triage_kind": StandingKind.NO_LONGER}
    )
    assert _held(item, misleading).kind is None and "the issue's own script" in _held(item, misleading).held


def test_no_two_classes_share_a_name_for_the_standing():
    import ast

    named = [
        node.name
        for path in (ROOT / "tools" / "reprokit").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and "Standing" in node.name
    ]
    assert len(named) == len(set(named)), sorted(named)


def _keeper_says(tmp_path, report) -> object:
    """The observation the runner makes of a run whose keeper wrote `report` (and whose case exited 0)."""
    from reprokit.run.execute import finish_observation

    (tmp_path / "reports").mkdir(exist_ok=True)
    (tmp_path / "held.json").write_text(json.dumps(report))
    return finish_observation(tmp_path, "k" * 32, 0, False, 1.0, 1, ("", 0, "", 0))


def test_the_runner_decides_by_the_keepers_report_fields_not_its_words(tmp_path):
    from reprokit.child import keeper

    held = ["subreaper", "pid namespace", "memory budget 512 MiB", "over memory budget"]
    config = {
        "held": str(tmp_path / "held.json"),
        "memory_budget": 512 << 20,
        "disk_budget": 1 << 30,
        "cache_budget": 2 << 30,
        "pids_budget": 4096,
    }  # the budgets' keys are required (KeeperConfig)
    keeper.write_report(config, held)
    written = json.loads((tmp_path / "held.json").read_text())
    assert written == {"held": held, "failure": None, "over_budget": "memory 512 MiB"}
    obs = _keeper_says(tmp_path, written)
    assert (obs.status, obs.over_budget, obs.contained) == (RunStatus.OVER_BUDGET, "memory 512 MiB", ", ".join(held))
    # the failure is a field: the words "bubblewrap failed" in the list decide nothing, the field does
    obs = _keeper_says(tmp_path, {"held": ["subreaper"], "failure": "bubblewrap", "over_budget": None})
    assert obs.status is RunStatus.CRASH and obs.malformed == "the run's bubblewrap sandbox did not start"
    obs = _keeper_says(tmp_path, {"held": ["subreaper", "bubblewrap failed"], "failure": None, "over_budget": None})
    assert obs.status is RunStatus.PASS and obs.malformed is None
    obs = _keeper_says(tmp_path, {"held": ["stopped by SIGSTOP"], "failure": "stopped", "over_budget": None})
    assert (obs.status, obs.signal) == (RunStatus.CRASH, "SIGSTOP")
    # what the keeper did not write (a case without Landlock could replace the file) is dropped
    obs = _keeper_says(tmp_path, {"held": ["subreaper", "[x](http://e)"], "failure": "mine", "over_budget": "1 TiB"})
    assert (obs.status, obs.contained, obs.over_budget) == (RunStatus.PASS, "subreaper", None)


def test_the_keepers_config_is_one_typed_dict_that_run_builds(tmp_path):
    from typing import get_type_hints

    from reprokit.child.keeper import KeeperConfig
    from reprokit.run.child_setup import contain_config

    script = tmp_path / "case" / "repro.py"
    script.parent.mkdir()
    script.write_text("")
    (tmp_path / "work").mkdir()
    (tmp_path / "private").mkdir()
    config = contain_config(sys.executable, script, tmp_path / "work", tmp_path / "private", {})
    assert set(config) <= set(get_type_hints(KeeperConfig)), set(config) - set(get_type_hints(KeeperConfig))


def test_the_failing_stage_is_one_vocabulary_that_the_probe_and_the_ladder_speak():
    """A record's stage is a Stage: the words child/stages.py writes and the ladder's; any other text in a probe's
    report (the case's process wrote it) names no stage, and a record holding one is refused on reading."""
    import ast

    from pydantic import ValidationError
    from reprokit.model.records import Stage
    from reprokit.run.outcome import ladder_stage
    from support import record

    assert record(stage="inductor").stage is Stage.INDUCTOR
    with pytest.raises(ValidationError):
        record(stage="a stage the case made up")
    assert Stage.read("dynamo") is Stage.DYNAMO and Stage.read("<b>dynamo</b>") is None and Stage.read(None) is None
    tree = ast.parse((ROOT / "tools" / "reprokit" / "child" / "stages.py").read_text())
    probe_says = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value in {"runtime", *(s.value for s in Stage)}
    }
    assert probe_says == {s.value for s in Stage}  # every word the probe writes is a Stage, and no Stage unwritten
    assert ladder_stage({"eager": "pass", "aot_eager": "fail"}) is Stage.AOT_AUTOGRAD
    assert f"{Stage.INDUCTOR}" == "inductor" and json.loads(dump(record(stage="export")))["stage"] == "export"


def test_a_triage_step_and_a_standing_share_no_word():
    """A triage's last step and its standing both said "not posted" (and, being str enums, compared equal across the
    two types): the step is where the triage ended (never stored), the standing what issue-states.yaml keeps. The
    stored word is unchanged: the committed file still reads and saves "not posted"."""
    from reprokit.model import issue_states
    from reprokit.model.issue_states import StandingKind
    from reprokit.tracker.judging import issue_lifecycle
    from reprokit.tracker.judging.issue_lifecycle import Step

    assert not {s.value for s in Step} & {k.value for k in StandingKind}
    assert Step.NO_COMMENT != StandingKind.NOT_POSTED
    ended = issue_lifecycle.reported("no script")
    assert ended.step is Step.NO_COMMENT and ended.standing.kind is StandingKind.NOT_POSTED
    assert ended.record_line() == "not posted: no script"
    stored = issue_states.load(ROOT).issues
    assert sum(s.triage_kind is StandingKind.NOT_POSTED for s in stored.values()) == (
        (ROOT / "issue-states.yaml").read_text(encoding="utf-8").count("triage_kind: not posted")
    )


def _observed(status: str, exception: str | None = None, message: str = "", exit_code: int = 1):
    from reprokit.run.execute import Observation

    return Observation(
        status=status,
        exit_code=0 if status == "pass" else exit_code,
        signal=None,
        seconds=1.0,
        exception=exception,
        message=message,
        stage="inductor" if exception else None,
        dynamo={"unique_graphs": 1},
    )


def test_signature_kinds_and_outcomes_are_members_and_share_no_word():
    """The signature's kinds and a release's outcome were bare strings, and two of them the same word ("passes" a
    kind and an outcome): each is a member of its own type now, and a word of neither is refused."""
    from reprokit.tracker.judging import signature
    from reprokit.tracker.judging.signature import Outcome, SignatureKind

    raised = signature.of(_observed("fail", "torch._inductor.exc.InductorError", "LoweringException: x"))
    passed, exited = signature.of(_observed("pass")), signature.of(_observed("fail", exit_code=3))
    assert (raised.kind, passed.kind, exited.kind) == (SignatureKind.RAISES, SignatureKind.PASSES, SignatureKind.EXITS)
    assert all(type(s.kind) is SignatureKind for s in (raised, passed, exited))
    outcomes = [
        signature.compare(raised, _observed("fail", "torch._inductor.exc.InductorError", "LoweringException: x")),
        signature.compare(raised, _observed("fail", "RuntimeError", "something else")),
        signature.compare(raised, _observed("pass")),
        signature.compare(raised, None),
    ]
    assert outcomes == [Outcome.SAME, Outcome.OTHER, Outcome.GOOD, Outcome.NOT_RUN]
    assert all(type(o) is Outcome for o in outcomes)
    assert not {k.value for k in SignatureKind} & {o.value for o in Outcome}
    assert SignatureKind.PASSES != Outcome.GOOD
    for vocabulary, unknown in ((SignatureKind, "finishes"), (Outcome, "passes"), (Outcome, "Same")):
        with pytest.raises(ValueError):
            vocabulary(unknown)


def test_the_compare_words_are_one_enum_and_compare_js_speaks_it():
    """The compare view's words were bare strings in Python and again in compare.js: the words the script computes
    and orders by are the members' values, in the members' order, and a word of neither is refused."""
    import re

    from reprokit.publish.site.compare import ORDER, Differs, differs

    script = (ROOT / "tools" / "reprokit" / "publish" / "templates" / "site" / "compare.js").read_text(encoding="utf-8")
    listed = re.search(r"var ORDER = \[([^\]]*)\]", script)
    assert listed is not None
    assert [w.strip().strip('"') for w in listed.group(1).split(",")] == [d.value for d in Differs] == list(ORDER)
    returned = set(re.findall(r'return "([^"]+)"', script)) | set(re.findall(r'\? "([^"]+)" : "([^"]+)"', script)[0])
    assert returned == {d.value for d in Differs}
    ran, skipped = ("reproduces", {"repro@float32": "reproduces"}), ("skipped", {"repro@float32": "skipped"})
    got = [differs(ran, None), differs(ran, ran), differs(ran, skipped), differs(ran, ("f", {"repro@float32": "x"}))]
    assert got == [Differs.ONE_SIDE, Differs.SAME, Differs.SKIP_VS_RAN, Differs.DIFFER]
    assert all(type(d) is Differs for d in got) and [str(d) for d in got] == ["one side", "no", "skipped vs ran", "yes"]
    with pytest.raises(ValueError):
        Differs("maybe")
