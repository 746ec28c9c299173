"""One shard of a backlog: every issue the shard takes is triaged by the engine `reprokit triage` uses
(triage.triage, with its release choice, --here, --releases, --target and --timeout), `jobs` issues at once, and
each judgement is appended to the journal as it comes. An issue whose journal line has the same key (what was judged:
backlog_select.judged_key) is skipped, so a shard killed midway resumes where it stopped.

The shard's issues share what can be shared: the torch environments of the cache (each release built once, under its
lock, the target's newest built before the issues start), the probe of the releases that decides each issue's key
(once per shard, not per issue), and the machine: as many triages at once as cores and memory allow. A triage that
raises is one judgement, "not judged: internal error" with the error's first line; the others go on."""

from __future__ import annotations

import datetime
import os
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.matrix import Matrix
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.store.backlog_journal import DRAFTS, JOURNAL, NOT_JUDGED, NOT_READ, Journal, Judgement, Ran, newest, read
from reprokit.tracker import triage, triage_request
from reprokit.tracker.backlog_select import Entry, Shard, file_key, judged_key, one_line
from reprokit.tracker.judging import triage_releases
from reprokit.tracker.judging.triage_standing import observed_line

MEMORY_PER_TRIAGE = 3 << 30  # a compiled script's run: torch, inductor's compile and the script's tensors


def default_jobs() -> int:
    """As many triages at once as cores, and as memory allows at MEMORY_PER_TRIAGE each."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return max(1, cores)
    return max(1, min(cores, available // MEMORY_PER_TRIAGE))


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


@dataclass
class Releases:
    """The releases each issue's triage runs, as the key names them; the probes made once for the whole shard."""

    request: triage_request.Request
    matrix: Matrix  # the repository's, where the request's target is read
    here_version: str = ""
    by_path: dict[str, str] | None = None

    def probe(self) -> None:
        """The releases named by interpreter (--here, paths given to --releases): asked once, for every key."""
        r = self.request
        if r.here:
            self.here_version = triage_releases.version_of(sys.executable, r.timeout)
        self.by_path = {p: triage_releases.version_of(p, r.timeout) for p in r.releases if "/" in p}

    def warm(self, log) -> None:
        """By default every issue runs the target's newest release: built once, before any triage starts (not
        when every issue of the shard was judged before)."""
        r = self.request
        if not r.here and not r.releases:
            target = self.matrix.targets[r.target]
            triage_releases.offer(
                triage_releases.newest_stable(target),
                r.timeout,
                log,
                target.family,
                target.pins.index_url if target.family != "cpu" else None,
            )

    def of(self, entry: Entry) -> tuple[str, ...]:
        assert entry.issue is not None  # only a read issue is judged
        if self.request.here:
            return (f"here {self.here_version}",)
        reported = triage_request.release_judged_on(entry.issue, self.request.reported)[0]
        plan = triage_releases.plan(
            reported, self.matrix.targets[self.request.target], given=list(self.request.releases) or None
        )
        return tuple((self.by_path or {}).get(r, r) for r in plan.releases)


def _base(entry: Entry, key: str) -> dict:
    issue = entry.issue
    return {
        "ident": entry.ident,
        "number": entry.number,
        "key": key,
        "state": issue.state if issue else "",
        "title": issue.title if issue else "",
        "closed_at": issue.closed_at if issue else "",
    }


def not_read(entry: Entry) -> Judgement:
    return Judgement(
        **_base(entry, file_key(entry.path)),
        kind=NOT_READ,
        words=entry.why.removeprefix("not read: ") + f" ({entry.path.name})",
        judged_at=now(),
    )


def judge(
    entry: Entry, key: str, request: triage_request.Request, matrix: Matrix, drafts: Path, ours: tuple, log
) -> Judgement:
    """The issue triaged; whatever the engine raises becomes the judgement's reason, never the batch's end."""
    assert entry.issue is not None
    base = _base(entry, key)
    try:
        done = triage.triage(
            entry.issue, request, matrix, drafts, ours=ours, log=lambda line: log(f"{entry.ident}: {line}")
        )
    except EnvironmentProblem as err:  # this machine (a release that did not import, a full disk): try again
        return Judgement(**base, kind=NOT_JUDGED, words=_first(err), judged_at=now(), retry=True)
    except InputError as err:  # the issue asks what this target cannot give (a GPU), ...
        return Judgement(**base, kind=NOT_JUDGED, words=_first(err), judged_at=now())
    except Exception as err:  # noqa: BLE001 - one issue's crash is that issue's line; the batch goes on
        return Judgement(
            **base,
            kind=NOT_JUDGED,
            words=f"internal error: {type(err).__name__}: {_first(err)}",
            judged_at=now(),
            retry=True,
        )
    t = done.triage
    signature = f"{t.signature.line()} (torch {t.observed_on}; {t.source()})" if t.signature is not None else ""
    return Judgement(
        **base,
        kind=str(done.standing.kind),
        words=done.standing.detail,
        judged_at=now(),
        releases=[Ran(r.release, r.why or observed_line(r.obs)) for r in done.runs],
        signature=signature,
        draft=done.draft.name if done.draft is not None else None,
    )


def _first(err: BaseException) -> str:
    return one_line((str(err).strip().splitlines() or [""])[0]) or type(err).__name__


@dataclass(frozen=True)
class ShardDone:
    taken: list[str]  # the idents the shard takes, in order
    judged: int
    skipped: int
    before: dict[str, Judgement]  # the journal as the run found it (the list's "changed since" compares with it)


def run_shard(
    entries: list[Entry],
    shard: Shard,
    request: triage_request.Request,
    matrix: Matrix,
    out: Path,
    jobs: int,
    ours: tuple = (),
    log=print,
) -> ShardDone:
    """Every entry the shard takes judged (or skipped: judged before on the same key), into OUT/backlog.jsonl."""
    journal_path = out / JOURNAL
    before = newest(read(journal_path))
    taken = [e for e in entries if shard.takes(e)]
    releases = Releases(request, matrix)
    if any(e.issue is not None for e in taken):
        releases.probe()
    todo: list[tuple[Entry, str]] = []
    for entry in taken:
        key = judged_key(entry.issue, request.target, releases.of(entry)) if entry.issue else file_key(entry.path)
        old = before.get(entry.ident)
        if old is None or old.key != key or old.retry:
            todo.append((entry, key))
    log(
        f"backlog shard {shard.index}/{shard.count}: {len(taken)} of {len(entries)} files; {len(taken) - len(todo)} "
        f"judged before on the same text and releases, {len(todo)} to judge, {jobs} at once"
    )
    if any(e.issue is not None for e, _ in todo):
        releases.warm(log)
    drafts = out / DRAFTS
    drafts.mkdir(parents=True, exist_ok=True)
    with Journal(journal_path) as journal:
        for entry, _ in todo:
            if entry.issue is None:
                journal.append(j := not_read(entry))
                log(f"{entry.ident}: {j.line()}")
        _judge_all([(e, k) for e, k in todo if e.issue is not None], request, matrix, drafts, ours, jobs, journal, log)
    return ShardDone([e.ident for e in taken], len(todo), len(taken) - len(todo), before)


def _judge_all(
    todo: list[tuple[Entry, str]],
    request: triage_request.Request,
    matrix: Matrix,
    drafts: Path,
    ours: tuple,
    jobs: int,
    journal: Journal,
    log,
) -> None:
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))  # each triage waits on its contained runs: threads suffice
    pending: set[Future] = set()
    try:
        for entry, key in todo:
            pending.add(pool.submit(judge, entry, key, request, matrix, drafts, ours, log))
        count = 0
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                j = future.result()
                journal.append(j)
                count += 1
                log(f"[{count}/{len(todo)}] {j.ident}: {j.line()[:200]}")
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)  # interrupted: no new triage starts
