"""The runs of one triage: an issue's script on a release, contained on the request's device; the reference runs
that give the signature (two that agree, a third where they do not); the run with torch.compile disabled (what eager
raises); and the fp64 check's three capturing runs. A run past its time limit, where the issue reports no hang, is
the machine's pace, not torch's behaviour: it is run once more with a longer limit and never outvotes a finished run."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.records import RunStatus
from reprokit.run.child_setup import write_readable_script
from reprokit.tracker.judging import fp64_check, signature, triage_judge, triage_releases, upstream_runs
from reprokit.tracker.judging.eager_fix import EagerError
from reprokit.tracker.judging.triage_releases import Offered
from reprokit.tracker.judging.triage_standing import TriageRun, observed_line
from reprokit.tracker.text.traceback_text import headline
from reprokit.tracker.text.user_paths import as_user_sees

RETRY_FACTOR = 2  # the longer limit of the one retry of a run that ran past its own


def timed_out(run: TriageRun) -> bool:
    return run.obs is not None and run.obs.status == RunStatus.TIMEOUT


@dataclass(frozen=True)
class Runner:
    """Runs of one script, each contained on the request's device."""

    setting: upstream_runs.Setting
    script: Path
    ours: tuple

    @property
    def longer(self) -> float:
        return RETRY_FACTOR * self.setting.timeout

    def ran(self, release: str, python: str, timeout: float | None = None) -> TriageRun:
        setting = dataclasses.replace(self.setting, python=python, timeout=timeout or self.setting.timeout)
        obs = upstream_runs.contained(setting, self.script)
        return TriageRun(release, obs, "", as_user_sees(obs.stderr_tail, self.script, self.ours))

    def ran_to_end(self, release: str, python: str, hang_reported: bool) -> TriageRun:
        """One run; where it ran past its limit and the issue reports no hang, once more with a longer limit."""
        run = self.ran(release, python)
        return self.ran(release, python, self.longer) if timed_out(run) and not hang_reported else run

    def eager_error(self, python: str) -> EagerError | None:
        """What the script raises with torch.compile disabled (TORCH_COMPILE_DISABLE=1): what eager raises."""
        obs = upstream_runs.contained(
            dataclasses.replace(self.setting, python=python), self.script, {"TORCH_COMPILE_DISABLE": "1"}
        )
        return EagerError(obs.exception.rsplit(".", 1)[-1], headline(obs.message or "")) if obs.exception else None


def reference_runs(ref: str, python: str, runner: Runner, log, hang_reported: bool = True) -> tuple:
    """The run on the reference release that gives the signature, confirmed by a second (and, where those two
    disagree, a third) run, with every run made; None where three runs disagree. Where the issue reports no hang, a
    run past its limit is no vote: one more run with a longer limit is made, and where no run finishes the third
    value says how long the script ran ("ran past N s")."""
    tries = [runner.ran(ref, python) for _ in range(2)]
    if not hang_reported and any(timed_out(t) for t in tries):
        tries.append(runner.ran(ref, python, runner.longer))
        finished = [t for t in tries if not timed_out(t)]
        if not finished:
            return None, tries, f"ran past {runner.longer:.0f} s"
        log(
            f"torch {ref}: {len(tries) - len(finished)} of 3 runs ran past their time limit, which the issue does not "
            "describe; the signature is the finished runs'"
        )
        chosen, _ = stable(finished, hang_reported=False)
        return chosen, tries, ""
    if not agree(tries[0], tries[1]):  # a third run decides which one torch did by chance
        tries.append(runner.ran(ref, python))
    chosen, odd = stable(tries, hang_reported)
    if odd is not None:
        log(
            f"torch {ref}: 1 of 3 runs of the script did otherwise ({observed_line(odd.obs)}); the signature is the "
            "other two's"
        )
    return chosen, tries, ""


def agree(a: TriageRun, b: TriageRun) -> bool:
    """Two runs of the script on one release did the same: both finished, or both failed alike (signature.compare),
    or neither could run."""
    assert a.obs is not None and b.obs is not None  # runs of Runner.ran: each has its observation
    if 77 in (a.obs.exit_code, b.obs.exit_code):  # the probe's "cannot run here" (no CUDA, ...)
        return a.obs.exit_code == b.obs.exit_code
    outcome = signature.compare(signature.of(a.obs, a.log), b.obs, b.log)
    return outcome is signature.SAME or (outcome is signature.GOOD and a.obs.status == RunStatus.PASS)


def stable(tries: list[TriageRun], hang_reported: bool = True) -> tuple[TriageRun | None, TriageRun | None]:
    """The run the signature comes from and the odd one out: two runs that agree decide; of three, the two that
    agree decide and the third is named; three that all disagree decide nothing (None, None). Where the issue
    reports no hang, runs past their limit are no votes: one finished run decides alone."""
    if not hang_reported:
        finished = [t for t in tries if not timed_out(t)]
        if len(finished) == 1:
            return finished[0], None
        tries = finished or tries
    if len(tries) <= 2:
        return (tries[0], None) if len(tries) == 1 or agree(tries[0], tries[1]) else (None, None)
    if agree(tries[0], tries[1]):
        return tries[0], tries[2]
    for kept, other in ((0, 1), (1, 0)):
        if agree(tries[kept], tries[2]):
            return tries[kept], tries[other]
    return None, None


def bisect(
    t, runs: list[TriageRun], runner: Runner, history: list[str], offer: Callable[[str], Offered]
) -> list[TriageRun]:
    """--since: the recorded releases (`history`) between the last run that failed as observed and the newest, halved
    until the first that does not; `offer` gives a release's interpreter (built on first use)."""
    same = [r for r in runs if triage_judge.outcome(t, r) is signature.SAME]
    if not same or triage_judge.outcome(t, runs[-1]) is signature.SAME:
        return runs
    candidates = triage_releases.between(history, same[-1].release, runs[-1].release)
    while candidates:
        mid = candidates[len(candidates) // 2]
        o = offer(mid)
        if o.python is None:
            candidates.remove(mid)
            continue
        ran = runner.ran(mid, o.python)
        runs = sorted([*runs, ran], key=lambda r: triage_releases.order(r.release))
        bad = triage_judge.outcome(t, ran) is signature.SAME
        candidates = [
            c for c in candidates if (triage_releases.order(c) > triage_releases.order(mid)) == bad and c != mid
        ]
    return runs


def fp64(setting: upstream_runs.Setting, folder: Path, script_text: str) -> fp64_check.Fp64Judgement:
    """The three capturing runs and the judge (fp64_check), each contained."""
    variants = {
        "low": (fp64_check.captured(script_text), {}),
        "eager": (fp64_check.captured(script_text), {"REPROKIT_BACKEND": "eager"}),
        "ref": (fp64_check.in_float64(script_text), {}),
    }
    dirs = {name: folder / name / "capture" for name in variants}
    for name, (text, _) in variants.items():
        shutil.rmtree(folder / name, ignore_errors=True)
        dirs[name].mkdir(parents=True)
        dirs[name].chmod(0o777)  # the case user writes its captures here, and nowhere else
        write_readable_script(folder / name / "repro.py", text)
    with ThreadPoolExecutor(len(variants)) as pool:  # three independent contained runs
        list(
            pool.map(
                lambda name: upstream_runs.contained(
                    setting,
                    folder / name / "repro.py",
                    {"REPROKIT_CAPTURE": str(dirs[name]), **variants[name][1]},
                    writable=(dirs[name],),
                ),
                variants,
            )
        )
    judge = fp64_check.judge_script(folder)
    done = upstream_runs.contained(setting, judge, {f"REPROKIT_{k.upper()}": str(v) for k, v in dirs.items()})
    return fp64_check.verdict(done.stdout_tail)
