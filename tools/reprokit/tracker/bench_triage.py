"""Figure 10 of `nox -s bench`: triage's time for a 200 KB issue body of 4,000 blocks (reading only: the script, the
hinted error, the thread, the text check of a signature), for a normal issue on one release (this environment's
torch: the thread read, the script's contained run, the signature, the standing), for a default triage (the
reported release, this environment's, and the cpu target's newest stable: built on the first run, announced first;
the second run is the warm time), and the warm time of a default triage and of `--here` over the real issues of
tests/fixtures/triage-two (the median; a default triage only of the issues whose releases are built here: nothing is
built for a figure). Prints figures, asserts nothing."""

from __future__ import annotations

import statistics
import tempfile
import time
from importlib import metadata
from pathlib import Path

from reprokit.model.records import RunStatus
from reprokit.run import torch_envs
from reprokit.run.execute import Observation
from reprokit.run.request import load_root_matrix
from reprokit.tracker import triage, triage_request
from reprokit.tracker.issue import build_stand_in, issue_json, issue_reported, issue_script, thread_reading
from reprokit.tracker.judging import signature, triage_releases

ROOT = Path.cwd()  # the repository: nox runs the bench from its root
FIXTURES = ROOT / "tests" / "fixtures" / "triage-two"  # real issues, our scripts, hand-run truth

# 4,000 blocks of 50 characters: a fenced Python block, a rank-prefixed error line, a quote
BLOCK = "```python\nimport torch\n```\n[rank0]: E: {:05d}\n> qq\n"
SCRIPT = (
    "import torch\n\n\n@torch.compile(backend='eager')\ndef f(a, b):\n    return a @ b\n\n\nf(torch.ones(2, 3), "
    "torch.ones(4, 5))\n"
)


def _issue(body: str, number: int = 1) -> issue_json.Issue:
    return issue_json.parse(
        {
            "number": number,
            "title": "a compiled matmul of mismatched shapes",
            "body": body,
            "state": "OPEN",
            "comments": [
                {
                    "author": {"login": "m"},
                    "authorAssociation": "MEMBER",
                    "body": body[:20_000],
                    "createdAt": "2026-01-01",
                }
            ],
        }
    )


def large_body(repeat: int = 5) -> tuple[int, int, float]:
    body = "".join(BLOCK.format(i) for i in range(4000))
    seen = Observation(
        status=RunStatus.FAIL,
        exit_code=1,
        signal=None,
        seconds=0.0,
        exception="RuntimeError",
        message="shape mismatch 12 vs 13",
        stage="dynamo",
    )
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        issue = _issue(body)
        issue_script.reproducer(issue)
        issue_reported.reported_failure(issue)
        thread_reading.closure(issue)
        thread_reading.asks_for_error(issue)
        signature.confirmed_in(signature.of(seen), [issue.body, *(c.body for c in issue.comments)])
        times.append(time.perf_counter() - start)
    return len(body), body.count("```python"), statistics.median(times)


def normal_issue(here: bool = True, log=lambda *_: None) -> tuple[str, float]:
    version = metadata.version("torch").split("+")[0]
    body = (
        "Compiling a matmul of mismatched shapes fails:\n\n```python\n" + SCRIPT + "```\n\n"
        f"It raises `torch._dynamo.exc.TorchRuntimeError`.\n\n### Versions\n\nPyTorch version: {version}\n"
    )
    request = triage_request.Request(target="cpu", here=here)
    with tempfile.TemporaryDirectory(prefix="reprokit-bench-") as out:
        start = time.perf_counter()
        done = triage.triage(_issue(body, 990001), request, load_root_matrix(ROOT), Path(out), log=log)
        return done.standing.line(), time.perf_counter() - start


def _built(issue: issue_json.Issue, matrix) -> bool:
    """Whether a default triage of the issue runs only releases already built (its stand-in first, for a build)."""
    reported, _ = triage_request.release_judged_on(issue, None)
    named = issue_reported.reported_version(issue)
    stand_in = build_stand_in.stand_in(named, issue.created) if named else None
    if stand_in is not None:
        reported = stand_in.before
    plan = triage_releases.plan(reported, matrix.targets["cpu"])
    stand_ins = stand_in.releases() if stand_in is not None else ()
    return all(torch_envs.built(r) for r in (*plan.releases, *stand_ins))


def fixture_triages(here: bool, log=lambda *_: None) -> tuple[list[float], int]:
    """Each fixture's triage timed (--here, or by default where its releases are built), and how many were left out;
    `log` gets each issue's number, time and standing."""
    matrix, times, left = load_root_matrix(ROOT), [], 0
    for path in sorted(FIXTURES.glob("*.json")):
        issue = issue_json.read(path)
        if not here and not _built(issue, matrix):
            left += 1
            continue
        with tempfile.TemporaryDirectory(prefix="reprokit-bench-") as out:
            start = time.perf_counter()
            done = triage.triage(
                issue, triage_request.Request(target="cpu", here=here), matrix, Path(out), log=lambda *_: None
            )
            times.append(time.perf_counter() - start)
            log(
                f"#{issue.number}: {times[-1]:.0f} s, {done.standing.line()[:160]}"
                + (" (drafted)" if done.draft else "")
            )
    return times, left


def main() -> None:
    size, blocks, seconds = large_body()
    print(
        f"10. triage: reading a {size / 1000:.0f} KB body of {blocks:,} blocks: median {seconds:.3f} s of 5", flush=True
    )
    said, seconds = normal_issue()
    print(f"    triage of a normal issue on one release (this environment's torch): {seconds:.1f} s ({said[:90]})")
    said, cold = normal_issue(here=False, log=lambda line: print(f"    {line}", flush=True))
    said, warm = normal_issue(here=False)
    print(
        f"    default triage (the reported release and cpu's newest stable), warm: {warm:.1f} s; the first run, "
        f"building what was missing: {cold:.1f} s ({said[:90]})"
    )
    for here, name in ((True, "--here"), (False, "default")):
        times, left = fixture_triages(here)
        median = f"median {statistics.median(times):.0f} s of {len(times)}" if times else "none run"
        print(
            f"    {name} triage of the real issues in {FIXTURES.relative_to(ROOT)}, warm: {median}"
            + (f" ({left} left out: their releases are not built here)" if left else ""),
            flush=True,
        )


if __name__ == "__main__":
    main()
