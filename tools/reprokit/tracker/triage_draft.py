"""The end of a judged triage: the fp64 reference where the signature is a low-precision comparison
(triage_decide.numerics), whether the standing is worth a comment (triage_decide.decide), and the comment drafted
(drafting/triage_comment) and written where it is."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reprokit.tracker.drafting.triage_comment import render
from reprokit.tracker.issue import issue_script
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import fp64_check, signature, triage_decide, triage_runs, upstream_runs
from reprokit.tracker.judging.issue_lifecycle import Step, Triage
from reprokit.tracker.judging.triage_standing import STILL, TriageRun
from reprokit.tracker.text.user_paths import as_user_sees
from reprokit.tracker.triage_request import Triaged


def concluded(
    issue: Issue,
    t: Triage,
    runs: list[TriageRun],
    found: issue_script.Reproducer,
    runner: triage_runs.Runner,
    python_of: dict[str, str],
    ref: str,
    folder: Path,
    out: Path,
) -> Triaged:
    """A triage past its runs (JUDGED, or ended without a comment) -> its final standing: the fp64 check, the decision,
    and the draft written in `out` where the standing is worth posting. The fp64 reference runs on the newest release
    that failed with the signature, else on `ref` (the release whose run gave it)."""
    text = found.text
    extra = []
    if (
        t.step is Step.JUDGED
        and t.standing.kind == STILL  # never "still" unjudged
        and t.signature is not None
        and t.signature.kind is signature.RAISES  # (a judged triage has one)
        and fp64_check.applies(text, t.signature.exception, t.signature.skeleton)
    ):
        same = [j.release for j in t.judged if j.outcome is signature.SAME]
        on = same[-1] if same else ref
        judged = triage_runs.fp64(dataclasses.replace(runner.setting, python=python_of[on]), folder / "fp64", text)
        t = triage_decide.numerics(t, judged.line(), judged.wrong_result if judged.judged else None, on)
        extra = [
            f"Against an fp64 reference (torch {on}, the script's random inputs seeded alike on every side): "
            f"{judged.line()}.",
            "",
        ]
    t = triage_decide.decide(dataclasses.replace(t, script_from=found.where), issue)
    draft = None
    if t.post:
        newest = next(r for r in reversed(runs) if r.obs is not None)
        versions_text = upstream_runs.collect_env(python_of[newest.release])
        body = render(issue, t, runs, as_user_sees(versions_text, None, runner.ours), extra)
        out.mkdir(parents=True, exist_ok=True)
        draft = out / f"issue-{issue.number}-comment.md"
        draft.write_text(body, encoding="utf-8")
    return Triaged(issue, t, runs, draft)
