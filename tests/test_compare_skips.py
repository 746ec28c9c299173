"""The compare view separates "skipped on one side, ran on the other" from "differs": a skip observed nothing, so it is
no difference of verdicts; a verdict that changed is."""

from reprokit.publish.site.compare import DIFFER, ONE_SIDE, SAME, SKIP_VS_RAN, compare, differs, verdict_words
from support import record


def column(**verdicts):
    return verdict_words([record(case="c", variant=v, verdict=w) for v, w in verdicts.items()])


def test_a_skip_against_a_run_is_listed_apart_from_a_difference():
    ran, skipped = column(repro="reproduces"), column(repro="skipped")
    assert differs(skipped, ran) == differs(ran, skipped) == SKIP_VS_RAN
    assert differs(column(repro="reproduces"), column(repro="does-not-reproduce")) == DIFFER
    both = column(repro="skipped", fixed="fix-works"), column(repro="reproduces", fixed="fix-broken")
    assert differs(*both) == DIFFER  # a real difference on one run decides
    assert differs(ran, ran) == SAME and differs(ran, None) == ONE_SIDE


def test_rows_list_differences_then_skips_then_one_side():
    verdicts = {
        "a-skip": {"x": column(repro="skipped"), "y": column(repro="reproduces")},
        "b-same": {"x": column(repro="reproduces"), "y": column(repro="reproduces")},
        "c-one": {"y": column(repro="reproduces")},
        "d-differs": {"x": column(repro="reproduces"), "y": column(repro="does-not-reproduce")},
    }
    assert [(r.case, r.differs) for r in compare(verdicts, "x", "y")] == [
        ("d-differs", DIFFER),
        ("a-skip", SKIP_VS_RAN),
        ("c-one", ONE_SIDE),
        ("b-same", SAME),
    ]


def test_the_changes_pages_rule_is_the_compare_views_a_skip_on_either_side_is_no_change():
    """verdict.is_change, behind the changes pages, the feed, the grid's marks and the Markdown reports, counts what
    the compare view counts as a difference: a run that newly ran (or no longer did) is none."""
    from reprokit.model.verdict import is_change
    from reprokit.publish.site.grid import changed_word

    skipped, ran, other = record(verdict="skipped"), record(verdict="reproduces"), record(verdict="does-not-reproduce")
    assert not is_change(skipped, ran) and not is_change(ran, skipped) and is_change(ran, other)
    assert not changed_word("skipped", "reproduces") and changed_word("reproduces", "does-not-reproduce")
    assert differs(verdict_words([skipped]), verdict_words([ran])) == SKIP_VS_RAN
