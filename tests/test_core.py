"""The verdict and gating core, the store and its views: fast, in-process tests (the mutation session runs these)."""

import json

import pytest
from reprokit.model.case import Oracle
from reprokit.model.claims import Claims
from reprokit.model.schema import InputError
from reprokit.model.verdict import Role, Verdict, reproduce_rate, tally
from reprokit.run.execute import Observation
from reprokit.run.outcome import ladder_stage, repro_verdict
from reprokit.store import expected
from reprokit.store.store import Store, merge_in_memory
from reprokit.store.views import current, release_of, version_changes
from support import record


def failed(exception, chain=()):
    probes = [{"exception": exception, "chain": list(chain)}]
    return Observation(
        status="fail", exit_code=1, signal=None, seconds=1.0, exception=exception, message="m", probes=probes
    )


def test_a_dotted_exception_name_must_match_whole_not_by_its_last_part():
    oracle = Oracle(kind="raises", exception="torch._dynamo.exc.Unsupported")
    assert repro_verdict(oracle, failed("torch._dynamo.exc.Unsupported"))[0] is Verdict.REPRODUCES
    assert repro_verdict(oracle, failed("mylib.exc.Unsupported"))[0] is Verdict.FAILS_DIFFERENTLY
    assert repro_verdict(oracle, failed("Unsupported"))[0] is Verdict.FAILS_DIFFERENTLY


@pytest.mark.parametrize(
    ("ladder", "stage"),
    [
        ({"eager": "fail", "aot_eager": "fail", "default": "fail"}, "dynamo"),
        ({"eager": "pass", "aot_eager": "fail", "default": "fail"}, "aot_autograd"),
        ({"eager": "pass", "aot_eager": "pass", "default": "fail"}, "inductor"),
    ],
)
def test_the_backend_ladder_names_the_first_failing_stage(ladder, stage):
    assert ladder_stage(ladder) == stage


def _gate(tmp_path, was, now, update=False, torch="2.13.0+cpu"):
    expected.save(expected.expected_path(tmp_path, "cpu"), {"c/repro@float32": Verdict(was)})
    return expected.check(tmp_path, "cpu", "cases", "2.13.0", [record(verdict=now, torch=torch)], update)


@pytest.mark.parametrize(
    ("was", "now"),
    [
        ("reproduces", "does-not-reproduce"),
        ("does-not-reproduce", "reproduces"),
        ("fix-works", "fix-broken"),
        ("fix-broken", "fix-works"),
    ],
)
def test_the_gate_fails_on_a_change_in_either_direction(tmp_path, was, now):
    gate = _gate(tmp_path, was, now)
    assert gate.gated and gate.failed
    assert gate.changes == [("c/repro@float32", Verdict(was), Verdict(now))]
    assert not _gate(tmp_path, now, now).failed


def test_update_expected_overwrites_a_changed_verdict(tmp_path):
    gate = _gate(tmp_path, "reproduces", "does-not-reproduce", update=True)
    assert gate.accepted == 1 and not gate.failed
    assert expected.load(expected.expected_path(tmp_path, "cpu")) == {"c/repro@float32": Verdict.DOES_NOT_REPRODUCE}


def test_another_release_is_history_and_not_gated_nor_accepted(tmp_path):
    gate = _gate(tmp_path, "reproduces", "does-not-reproduce", update=True, torch="2.10.1")
    assert not gate.gated and not gate.failed and gate.changes and not gate.accepted and gate.refused
    assert expected.load(expected.expected_path(tmp_path, "cpu")) == {"c/repro@float32": Verdict.REPRODUCES}
    said = expected.describe(gate, tmp_path, "cpu", "cases")
    assert said[0].startswith("--update-expected: nothing accepted into expected/cpu.yaml: torch 2.10.1 ran")
    assert "not the pinned 2.13.0: recorded as history" in said[1]


def test_a_build_of_the_pinned_release_is_gated(tmp_path):
    assert _gate(tmp_path, "reproduces", "does-not-reproduce", torch="2.13.0").failed
    assert release_of("2.13.0+cpu") == release_of("2.13.0") == "2.13.0"


def test_an_expected_file_with_an_unknown_verdict_is_one_line(tmp_path):
    path = expected.expected_path(tmp_path, "cpu")
    path.parent.mkdir()
    path.write_text("c/repro@float32: fixed\n")
    with pytest.raises(InputError, match="'fixed' is not a verdict"):
        expected.load(path)


def test_tally_keeps_our_fixes_and_the_articles_apart():
    records = [
        record(case="a"),
        record(case="b", verdict="does-not-reproduce"),
        record(case="s", verdict="skipped"),
        record(case="a", variant="fixed", verdict="fix-works"),
        record(case="a", variant="article_fix", verdict="fix-broken"),
        record(case="b", variant="fixed", verdict="fix-broken"),
    ]
    t = tally(records)
    assert (t.repros_run, t.reproduce, t.do_not_reproduce, t.repros_skipped) == (2, 1, 1, 1)
    assert (t.fixes_work, t.fixes_broken, t.article_fixes_work, t.article_fixes_broken) == (1, 1, 0, 1)
    assert t.fixes_text() == "1/2 work" and t.article_fixes_text() == "0/1 work"
    assert reproduce_rate(records) == (1, 2)
    assert Role.of("inference-default") is Role.REPRO  # a sweep cell is read like a repro


def test_verdict_meanings():
    assert [v for v in Verdict if v.compile_failure] == [Verdict.REPRODUCES, Verdict.FAILS_DIFFERENTLY, Verdict.TIMEOUT]
    assert [v for v in Verdict if v.needs_attention] == [
        Verdict.FAILS_DIFFERENTLY,
        Verdict.TIMEOUT,
        Verdict.FIX_BROKEN,
        Verdict.FLAKY,
    ]
    assert [v for v in Verdict if not v.ran] == [Verdict.SKIPPED]
    assert [v for v in Verdict if v.failed_as_claimed] == [Verdict.REPRODUCES]


def test_a_merge_replaces_only_the_same_identity(tmp_path):
    store = Store(tmp_path)
    store.merge([record(case="a"), record(case="b"), record(case="a", torch="2.12.0")])
    store.merge([record(case="a", verdict="does-not-reproduce", recorded_at="2026-12-01T00:00:00Z")])
    got = {(r.case, r.torch): r.verdict for r in store.load().records}
    assert got == {
        ("a", "2.13.0+cpu"): Verdict.DOES_NOT_REPRODUCE,
        ("b", "2.13.0+cpu"): Verdict.REPRODUCES,
        ("a", "2.12.0"): Verdict.REPRODUCES,
    }
    assert sorted(p.name for p in (tmp_path / "cpu" / "cases").iterdir()) == ["2.12.0.jsonl", "2.13.0+cpu.jsonl"]


def test_a_skip_never_replaces_a_run_but_a_run_replaces_a_skip(tmp_path):
    """A one-GPU machine skips the two-rank cases a two-GPU machine ran: the merge keeps what was observed."""
    store = Store(tmp_path)
    store.merge([record(case="two-ranks", verdict="reproduces"), record(case="later", verdict="skipped")])
    store.merge(
        [
            record(case="two-ranks", verdict="skipped", why="needs 2 CUDA devices, found 1"),
            record(case="later", verdict="does-not-reproduce"),
        ]
    )
    got = {r.case: r.verdict for r in store.load().records}
    assert got == {"two-ranks": Verdict.REPRODUCES, "later": Verdict.DOES_NOT_REPRODUCE}
    in_memory = merge_in_memory(store.load().records, [record(case="two-ranks", verdict="skipped")])
    assert {r.case: r.verdict for r in in_memory}["two-ranks"] is Verdict.REPRODUCES


def test_a_skip_of_changed_content_replaces_the_run_of_the_old_content(tmp_path):
    """A case edited so that it now skips here: its old run observed another case. Same content, or an old record
    without a hash: the run that happened stays."""
    store = Store(tmp_path)
    store.merge(
        [
            record(case="edited", verdict="does-not-reproduce", case_hash="old0"),
            record(case="two-ranks", verdict="reproduces", case_hash="same"),
            record(case="unhashed", verdict="reproduces"),
        ]
    )
    store.merge(
        [
            record(case="edited", verdict="skipped", why="no Linear became a Float8Linear", case_hash="new1"),
            record(case="two-ranks", verdict="skipped", why="needs 2 CUDA devices, found 1", case_hash="same"),
            record(case="unhashed", verdict="skipped", why="needs 2 CUDA devices, found 1", case_hash="new1"),
        ]
    )
    got = {r.case: r.verdict for r in store.load().records}
    assert got == {"edited": Verdict.SKIPPED, "two-ranks": Verdict.REPRODUCES, "unhashed": Verdict.REPRODUCES}


def test_importing_an_older_copy_of_the_store_keeps_the_newer_records(tmp_path):
    store = Store(tmp_path)
    store.merge([record(case="a", verdict="does-not-reproduce", recorded_at="2026-12-01T00:00:00Z")])
    store.merge(
        [
            record(case="a", verdict="reproduces", recorded_at="2026-11-30T00:00:00Z"),
            record(case="b", recorded_at="2026-11-30T00:00:00Z"),
        ]
    )
    got = {r.case: r.verdict for r in store.load().records}
    assert got == {"a": Verdict.DOES_NOT_REPRODUCE, "b": Verdict.REPRODUCES}


def test_output_tails_are_kept_apart_and_read_only_for_what_is_shown(tmp_path):
    from reprokit.publish import render
    from reprokit.publish.pages import ci_artifacts

    store = Store(tmp_path)
    store.merge(
        [
            record(case="aa", verdict="fails-differently", stderr_tail="Traceback ... BOOM"),
            record(case="bb", stdout_tail="FP8_CONFIG {}"),
        ]
    )
    folder = tmp_path / "cpu" / "cases"
    assert "BOOM" not in (folder / "2.13.0+cpu.jsonl").read_text()
    assert "BOOM" in (folder / "2.13.0+cpu.output.jsonl").read_text()
    assert {r.case: r.stderr_tail for r in store.load().records} == {"aa": "Traceback ... BOOM", "bb": ""}
    bare = store.load(outputs=False)
    assert [r.stderr_tail + r.stdout_tail for r in bare.records] == ["", ""]
    view = render.shown(bare, current(bare, "cpu", "cases", "2.13.0"), None)
    # read where a page quotes them: a's JUnit failure body; b (reproduces, no claimed rate counts it) is not quoted
    assert {r.case: (r.stderr_tail, r.stdout_tail) for r in view.records} == {
        "aa": ("Traceback ... BOOM", ""),
        "bb": ("", ""),
    }
    assert "BOOM" in ci_artifacts.junit_xml(view)
    claims = Claims.model_validate(
        {
            "claims": [
                {
                    "id": "rate",
                    "section": "1",
                    "claim": "x",
                    "cases": ["bb"],
                    "sweep": {"measure": "fp8-cells-failing", "claimed": 0.89},
                }
            ]
        }
    )
    view = render.shown(store.load(outputs=False), current(bare, "cpu", "cases", "2.13.0"), claims)
    assert {r.case: r.stdout_tail for r in view.records}["bb"] == "FP8_CONFIG {}"  # the rate counts its lines
    # a new record of the same identity without output drops the old tails: they were another run's
    store.merge([record(case="aa", verdict="does-not-reproduce", recorded_at="2026-12-01T00:00:00Z")])
    assert "BOOM" not in (folder / "2.13.0+cpu.output.jsonl").read_text()
    assert {r.case: r.stderr_tail for r in store.load().records} == {"aa": "", "bb": ""}


def test_a_malformed_output_line_is_refused_with_one_line(tmp_path):
    store = Store(tmp_path)
    store.merge([record(stderr_tail="x")])
    path = tmp_path / "cpu" / "cases" / "2.13.0+cpu.output.jsonl"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "stderr_tail": 3}) + "\n")
    with pytest.raises(InputError, match=r"output\.jsonl:1: stderr_tail: an output line holds"):
        store.load()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(colour="red"), "colour: is not a known field"),
        (lambda d: d.update(verdict="fixed"), "verdict:"),
        (lambda d: d.pop("torch"), "torch: is required"),
    ],
)
def test_a_malformed_record_is_refused_with_one_line_naming_file_and_field(tmp_path, edit, message):
    store = Store(tmp_path)
    store.merge([record()])
    path = tmp_path / "cpu" / "cases" / "2.13.0+cpu.jsonl"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(InputError) as err:
        store.load()
    assert str(err.value).startswith(f"{path}:1: ") and message in str(err.value) and "\n" not in str(err.value)


def test_the_current_view_is_the_pinned_release_else_the_newest():
    from reprokit.store.store import Loaded

    loaded = Loaded(
        [
            record(case="a", torch="2.12.0"),
            record(case="a", torch="2.13.0+cpu", verdict="fix-works"),
            record(case="a", torch="2.14.1", verdict="does-not-reproduce"),
        ]
    )
    pinned = current(loaded, "cpu", "cases", "2.13.0")
    assert pinned.release == "2.13.0" and not pinned.off_pin
    newest = current(loaded, "cpu", "cases", "2.9.0")
    assert newest.release == "2.14.1" and newest.off_pin
    assert newest.history == ["2.12.0", "2.13.0", "2.14.1"]
    changes = version_changes(loaded, "cpu", "cases")
    assert [(a, b) for _, a, b, _, _ in changes] == [("2.12.0", "2.13.0"), ("2.13.0", "2.14.1")]


def test_builds_of_one_release_show_together_newest_record_first():
    from reprokit.store.store import Loaded

    loaded = Loaded(
        [
            record(case="a", torch="2.13.0+cpu"),
            record(case="b", torch="2.13.0+cpu"),
            record(case="a", torch="2.13.0", verdict="does-not-reproduce", recorded_at="2026-12-01T00:00:00Z"),
        ]
    )
    view = current(loaded, "cpu", "cases", "2.13.0")
    assert {r.case: r.verdict for r in view.records} == {"a": Verdict.DOES_NOT_REPRODUCE, "b": Verdict.REPRODUCES}
    assert view.builds == ["2.13.0", "2.13.0+cpu"]


def test_no_module_of_the_package_shadows_the_standard_library():
    """probe.py runs as a script from the package folder, so a module named like a standard one (bisect.py) would be
    imported by torch in place of it."""
    import sys
    from pathlib import Path

    import reprokit

    names = {p.stem for p in Path(reprokit.__file__).parent.rglob("*.py")}
    assert not names & set(sys.stdlib_module_names)


def test_a_target_page_labels_every_verdict_with_its_dtype_and_wraps_the_claim_whole():
    from pathlib import Path

    from reprokit.model import corpus
    from reprokit.publish.pages import report
    from reprokit.store.store import Loaded

    cases = {c.case.id: c for c in corpus.discover(Path(__file__).resolve().parents[1] / "cases")}
    case_id = next(i for i, c in cases.items() if c.case.article and len(c.case.article.claim) > 90)
    loaded = Loaded(
        [
            record(case=case_id, dtype="bfloat16", exception="RuntimeError", message="boom", status="fail"),
            record(case=case_id, variant="fixed", dtype="bfloat16", verdict="fix-works", status="pass"),
        ]
    )
    md = report.render_target(current(loaded, "cpu", "cases", "2.13.0"), cases, "CPU")
    row = next(line for line in md.splitlines() if line.startswith(f"| [`{case_id}`]"))
    assert "🔴 reproduces `bfloat16`: `RuntimeError` boom" in row and "✅ fix-works `bfloat16`" in row
    claim = cases[case_id].case.article.claim
    assert row.split(" | ")[2].replace("<br>", " ") == f"§{cases[case_id].case.article.section}: {claim}"


def _one_case(tmp_path, extra_yaml, **files):
    """cases/one-case (a raising repro plus `files`) and the corpus discovered from it."""
    from reprokit.model import corpus

    folder = tmp_path / "cases" / "one-case"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(
        f"id: one-case\ntitle: t\ncategory: diagnosis\n{extra_yaml}"
        "expect:\n  repro: {kind: raises, exception: ValueError}\n"
    )
    for name, text in {"repro.py": "raise ValueError\n", **files}.items():
        (folder / name).write_text(text)
    return folder, {cd.case.id: cd for cd in corpus.discover(tmp_path / "cases")}


def test_rows_recorded_before_their_case_changed_are_marked(tmp_path):
    from reprokit.model import case_identity
    from reprokit.publish.pages.report import recorded_before_change

    folder, cases = _one_case(tmp_path, "article: {section: '0', claim: x, stance: fails}\n")
    now = case_identity.content_hash(folder)
    records = [record(case="one-case", case_hash=now), record(case="one-case", dtype="bfloat16", case_hash=None)]
    # the same content; a record without a hash may be of any version
    assert recorded_before_change(records, cases) == (set(), {("one-case", "bfloat16")})
    (folder / "repro.py").write_text("raise ValueError('changed')\n")
    assert recorded_before_change(records, cases) == ({("one-case", "float32")}, {("one-case", "bfloat16")})


def test_runs_of_the_corpus_without_a_record_are_counted_by_key(tmp_path):
    from reprokit.publish.pages.report import unrecorded

    _, cases = _one_case(tmp_path, "requires: {dtypes: [float32, bfloat16]}\n", **{"fixed.py": "pass\n"})
    records = [
        record(case="one-case", dtype="bfloat16"),
        record(case="one-case", variant="fixed", dtype="float32"),
        record(case="gone-case"),
    ]  # a record of a case no longer in the corpus fills nothing
    assert unrecorded(records, cases) == 2  # repro@float32 and fixed@bfloat16


def test_the_history_page_shows_each_release_and_marks_cells_of_another_case_version():
    from reprokit.publish.pages.history_page import render_history

    every = {
        "2.8.0": [
            record(case="a-case", torch="2.8.0+cu128", case_hash="old"),
            record(case="a-case", variant="fixed", verdict="fix-works", torch="2.8.0+cu128", case_hash=None),
        ],
        "2.9.1": [
            record(case="a-case", verdict="does-not-reproduce", torch="2.9.1+cu128", case_hash="new"),
            record(case="removed-case", torch="2.9.1+cu128", case_hash="x"),
        ],
    }
    page = render_history("cpu", "a CPU", every, "2.9.1", {"a-case": "new"})
    cells = [
        [c.strip() for c in line.strip("|").split("|")] for line in page.splitlines() if line.startswith("| [`a-case`]")
    ]
    rows = {c[0].split(") ")[-1]: c[1:] for c in cells}
    assert rows == {"fixed@float32": ["✓ works ‡", ""], "repro@float32": ["✖ reproduces †", "○ does not"]}
    assert "2.8.0: 2.8.0+cu128; 2.9.1: 2.9.1+cu128" in page and "removed-case" not in page


def test_a_record_holding_a_unicode_line_separator_survives_the_store_and_the_journal(tmp_path):
    """Case output may hold U+2028 or U+0085 (written unescaped): only '\\n' ends a line of the store or a journal."""
    from reprokit.model.records import RunHeader
    from reprokit.store.journal import read_journal

    odd = "before\u2028after\x85end\x1c"
    store = Store(tmp_path)
    store.merge([record(message=odd, stderr_tail=odd)])
    (got,) = store.load().records
    assert got.message == odd and got.stderr_tail == odd
    header = RunHeader(run_id="r1", target="cpu", torch="2.13.0+cpu", device="cpu", environment={}, reprokit="test")
    journal = store.open_journal(header, "token")
    journal.append(record(message=odd))
    journal.close(remove=False)
    _, _, records = read_journal(journal.path)
    assert [r.message for r in records] == [odd]
