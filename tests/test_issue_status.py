"""The upstream-issues page: per upstream case, the releases where its repro reproduces, and the two flags
(closed but reproducing on the newest release, open but not reproducing)."""

from pathlib import Path

from reprokit.model.case import Case
from reprokit.model.corpus import CaseDir
from reprokit.publish import issue_status
from reprokit.publish.pages import report
from support import record


def upstream_case(case_id: str, state: str) -> CaseDir:
    case = Case(
        id=case_id,
        title="t",
        category="fusion",
        source="upstream",
        reported_on="2.9.0",
        issue_state=state,
        issue_checked="2026-12-01",
        area="inductor-cpu",
        links=["https://github.com/pytorch/pytorch/issues/123456"],
        requires={"devices": ["cpu"]},
        expect={"repro": {"kind": "wrong-result"}},
    )
    return CaseDir(case, Path("cases") / case_id)


def history(case_id: str, verdicts: dict[str, str]) -> dict[str, list]:
    return {
        rel: [
            record(case=case_id, torch=f"{rel}+cpu", verdict=v),
            record(case=case_id, variant="fixed", torch=f"{rel}+cpu", verdict="fix-works"),
        ]
        for rel, v in verdicts.items()
    }


def test_stretches_first_last_and_the_closed_but_reproducing_flag():
    every = history(
        "case-a", {"2.8.0": "reproduces", "2.9.1": "reproduces", "2.10.0": "does-not-reproduce", "2.11.0": "reproduces"}
    )
    (standing,) = issue_status.standings([upstream_case("case-a", "closed")], {"cpu": every})
    assert standing.stretches() == [("2.8.0", "2.9.1"), ("2.11.0", "2.11.0")]
    assert standing.reproducing == ["2.8.0", "2.9.1", "2.11.0"]
    assert standing.flag() == "⚑ closed upstream, still reproduces on 2.11.0"


def test_open_issue_that_no_longer_reproduces_is_flagged_and_a_fixed_closed_one_is_not():
    every = {
        **history("case-a", {"2.8.0": "reproduces", "2.9.1": "does-not-reproduce"}),
    }
    every["2.8.0"] += history("case-b", {"2.8.0": "reproduces"})["2.8.0"]
    every["2.9.1"] += history("case-b", {"2.9.1": "does-not-reproduce"})["2.9.1"]
    a, b = issue_status.standings([upstream_case("case-a", "open"), upstream_case("case-b", "closed")], {"cpu": every})
    assert a.flag() == "⚑ open upstream, does not reproduce on 2.9.1"
    assert b.flag() == ""


def test_a_skipped_newest_release_does_not_count_as_newest():
    every = history("case-a", {"2.8.0": "reproduces", "2.9.1": "skipped"})
    (standing,) = issue_status.standings([upstream_case("case-a", "closed")], {"cpu": every})
    assert standing.newest == ("2.8.0", standing.verdicts[0][1])


def test_any_reproducing_dtype_makes_the_release_reproduce():
    recs = [
        record(case="case-a", dtype="bfloat16", verdict="does-not-reproduce"),
        record(case="case-a", dtype="float32", verdict="reproduces"),
    ]
    assert str(issue_status.release_verdict(recs)) == "reproduces"


def test_page_and_index_section_are_written_only_with_upstream_cases(tmp_path):
    cases = [upstream_case("case-a", "closed")]
    every = history("case-a", {"2.8.0": "reproduces", "2.9.1": "reproduces"})
    page = issue_status.render(cases, {"cpu": every})
    assert "[#123456](https://github.com/pytorch/pytorch/issues/123456)" in page
    assert "| 2.8.0 | 2.9.1 | 2.8.0–2.9.1 |" in page
    assert (
        "Flagged: 1 closed issues whose repro still reproduces on the newest recorded release of a target (1 " in page
    )
    both = issue_status.render(cases, {"cpu": every, "h100": every})  # one issue, flagged on two targets
    assert (
        "Flagged: 1 closed issues whose repro still reproduces on the newest recorded release of a target (2 " in both
    )
    assert issue_status.render(cases, {}) is None
    assert issue_status.index_section(cases, {"cpu": every})[0] == "## Upstream issues"
    written = report.write_reports(tmp_path, {}, cases, {}, histories={"cpu": every})
    assert tmp_path / "upstream-issues.md" in written


def test_a_release_older_than_the_one_the_issue_reports_flags_nothing():
    """#181568 was reported on 2.13.0.dev: a 2.11.0 run that reproduces says nothing about it either way."""
    from reprokit.publish.issue_status import _older

    assert _older("2.11.0", "2.13.0.dev20260301") and not _older("2.13.0", "2.13.0.dev20260301")
    assert not _older("2.15.0", "2.13.0") and not _older("2.11.0", "unknown") and not _older("2.11.0", None)
