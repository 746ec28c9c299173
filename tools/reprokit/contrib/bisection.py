"""Where a case's verdict changes among released torch versions (cargo-bisect-rustc over releases).

The search looks up recorded results first and runs only what is missing. It assumes one boundary between the
oldest and the newest release (a binary search), so it runs at most ceil(log2(n)) + 1 releases on a fresh store.
Only "reproduces" and "does not reproduce" decide; a release whose run timed out, crashed, failed differently or
did not run is stepped over (cargo-bisect-rustc's `Satisfies::Unknown`); where such a release could hold the change
the answer is "undecided", with the reason and the retry that would decide it. Two releases run one after the other
and undecided for the same reason (a wrong oracle, a limit too short) stop the search: the rest would repeat it.
The answer's words and why a result decides nothing are bisection_answer.py's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import overload

from reprokit.contrib.bisection_answer import Answer, Seen, same_reason, undecided, why_undecided
from reprokit.model.releases import release_key
from reprokit.model.verdict import Verdict

_release_key = partial(release_key, labels="last")  # a release given by name (nightly and the like): the newest


Probe = Callable[[str], "Seen | Verdict | None"]  # a release -> its result there (None: could not be had)


class BisectionInterrupted(Exception):
    """The run of one release was interrupted (SIGINT/SIGTERM): the search stops there."""


@dataclass
class Bisection:
    versions: list[str]  # oldest first
    seen: dict[str, Seen] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)  # releases the search had to run (not found recorded)
    timeout: float | None = None  # the runs' time limit (a timed-out release's retry doubles it)
    built: list[str] = field(default_factory=list)  # releases whose environment the search had to build
    stopped: str = ""  # why the search stopped early (the same undecided reason twice, --max-envs)

    def boundary(self) -> tuple[str, str] | None:
        """(last release with the oldest verdict, first release with the newest), when they differ."""
        known = [v for v in self.versions if _decisive(self.seen.get(v))]
        for a, b in zip(known, known[1:], strict=False):
            if _side(self.seen[a]) != _side(self.seen[b]):
                return a, b
        return None

    def answer(self, also_between: tuple[str, ...] = ()) -> Answer:
        """The answer; `also_between`: recorded-history releases that were no candidates (--no-between) but lie
        between the given ones, named when the change may be in them."""
        timeout = self.timeout
        needed = max((s.seconds for s in self.seen.values() if _decisive(s)), default=0.0)
        boundary = self.boundary()
        if boundary is not None:
            a, b = boundary
            inside = self.versions[self.versions.index(a) + 1 : self.versions.index(b)]
            unsettled = [(v, self.seen[v]) for v in inside if v in self.seen]
            kind = "fixed" if self.seen[a].verdict is Verdict.REPRODUCES else "regressed"
            if unsettled:
                return undecided(unsettled, timeout, a, b, needed=needed)
            extra = [v for v in also_between if _between(v, a, b)]
            untested = tuple(v for v in [*inside, *extra] if v not in self.seen)
            return Answer(kind, a, b, tuple(sorted(set(untested), key=_release_key)))
        unsettled = [(v, s) for v, s in self.seen.items() if not _decisive(s)]
        known = [v for v in self.versions if _decisive(self.seen.get(v))]
        if self.stopped:
            return undecided(unsettled, timeout, stopped=self.stopped, needed=needed)
        if unsettled or len(known) < 2:
            return undecided(unsettled, timeout, needed=needed)
        return Answer("no change", known[0], known[-1])

    def summary(self, also_between: tuple[str, ...] = ()) -> str:
        """What was tested, in spans of releases, then the answer, e.g. 'reproduces 2.8.0 – 2.10.0; does not
        reproduce 2.11.0 – 2.15.0; fixed in 2.11.0: last bad 2.10.0, first good 2.11.0'. A span names only tested
        releases at its ends; untested ones are listed, never assumed."""
        known = [(v, self.seen[v]) for v in self.versions if v in self.seen]
        if not known:
            return f"no release gave a verdict; {self.answer(also_between).line()}"
        spans: list[list] = []
        for version, seen in known:
            if spans and spans[-1][0] == _words(seen.verdict):
                spans[-1][2] = version
            else:
                spans.append([_words(seen.verdict), version, version])
        parts = [f"{words} {a}" + (f" – {b}" if a != b else "") for words, a, b in spans]
        parts.append(self.answer(also_between).line())
        untested = [v for v in self.versions if v not in self.seen]
        return "; ".join(parts) + (f" (releases not tested: {', '.join(untested)})" if untested else "")


def most_runs(n: int) -> int:
    """The runs a search over n releases makes when every run decides: the newest, then a binary search."""
    return math.ceil(math.log2(n)) + 1 if n > 1 else n


def _between(version: str, a: str, b: str) -> bool:
    return _release_key(a) < _release_key(version) < _release_key(b)


def _decisive(seen: Seen | None) -> bool:
    return seen is not None and seen.verdict in (Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE)


def _side(seen: Seen) -> bool:
    return seen.verdict.failed_as_claimed


def _words(verdict: Verdict) -> str:
    return {Verdict.REPRODUCES: "reproduces", Verdict.DOES_NOT_REPRODUCE: "does not reproduce"}.get(
        verdict, str(verdict)
    )


@overload
def _as_seen(value: Seen | Verdict) -> Seen: ...
@overload
def _as_seen(value: Seen | Verdict | None) -> Seen | None: ...
def _as_seen(value: Seen | Verdict | None) -> Seen | None:
    return Seen(value) if isinstance(value, Verdict) else value


def search(
    versions: list[str],
    recorded: Mapping[str, Seen | Verdict],
    run: Probe,
    needs_build: Callable[[str], bool] = lambda version: False,
    max_envs: int | None = None,
) -> Bisection:
    """The first release whose verdict is the newest release's (a lower-bound binary search): `recorded` answers
    first, `run` the rest. The newest release is probed first, then at most ceil(log2(n)) others. It stops when two
    releases run one after the other are undecided for the same reason, or before building more than `max_envs`
    environments (`needs_build`: whether a release's run would build one); with `max_envs`, the releases that need
    none (recorded or built) are searched first, and only the range they leave open is searched with builds."""
    result = Bisection(list(versions), {v: _as_seen(s) for v, s in recorded.items()})
    if max_envs is not None:  # the releases that cost no environment narrow the range before one is built
        free = [v for v in versions if v in result.seen or not needs_build(v)]
        if len(free) > 1:
            _search(free, result, run, needs_build, None)
            if (found := result.boundary()) is not None and not result.stopped:
                versions = versions[versions.index(found[0]) : versions.index(found[1]) + 1]
    if not result.stopped:
        _search(versions, result, run, needs_build, max_envs)
    return result


def _search(
    versions: list[str], result: Bisection, run: Probe, needs_build: Callable[[str], bool], max_envs: int | None
) -> None:
    """The binary search over `versions` (a range of result.versions), its results added to `result`."""
    last: list[tuple[str, str]] = []  # the previous run's (release, undecided reason), none when it decided

    def verdict_at(i: int) -> Seen | None:
        version = versions[i]
        if version in result.seen or result.stopped:
            return result.seen.get(version)
        if needs_build(version):
            if max_envs is not None and len(result.built) >= max_envs:
                result.stopped = (
                    f"--max-envs {max_envs}: {len(result.built)} environments built "
                    f"({', '.join(result.built) or 'none'}), torch {version} would need one more"
                )
                return None
            result.built.append(version)
        result.ran.append(version)
        got = _as_seen(run(version))
        if got is not None:
            result.seen[version] = got
        reason = "not run" if got is None else "" if _decisive(got) else same_reason(got)
        if reason and last and last[-1][1] == reason:
            why = why_undecided(got, None)[0] if got is not None else "no result"
            result.stopped = (
                f"torch {last[-1][0]} and {version} are both undecided for the same reason ({why}); "
                "the search stopped there rather than build the other releases to repeat it"
            )
        last[:] = [(version, reason)] if reason else []
        return result.seen.get(version)

    hi = len(versions) - 1
    while hi >= 0 and not result.stopped and not _decisive(verdict_at(hi)):
        hi -= 1
    if hi <= 0 or result.stopped:
        return
    newest = _side(result.seen[versions[hi]])
    lo = 0
    while lo < hi and not result.stopped:
        mid = (lo + hi) // 2
        probe = mid
        while probe < hi and not _decisive(verdict_at(probe)):  # unknown: the next decisive release up
            if result.stopped:
                return
            probe += 1
        if probe == hi or _side(result.seen[versions[probe]]) == newest:
            hi = mid
        else:
            lo = probe + 1


def candidates(given: list[str] | None, history: list[str], between: bool = True) -> list[str]:
    """The releases to search, oldest first: the recorded history by default; with --versions, the given ones and
    (unless between=False) every history release that lies between the oldest and the newest given, so that the
    printed first good release is the first good release."""
    if not given:
        return list(history)
    if not between:
        return list(given)
    low, high = min(given, key=_release_key), max(given, key=_release_key)
    inside = [v for v in history if _release_key(low) < _release_key(v) < _release_key(high)]
    return sorted(set(given) | set(inside), key=_release_key)
