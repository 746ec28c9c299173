"""Where a case's verdict changes among released torch versions (cargo-bisect-rustc over releases).

The search looks up recorded results first and runs only what is missing. It assumes one boundary between the
oldest and the newest release (a binary search), so it runs at most ceil(log2(n)) + 1 releases on a fresh store;
a release where the repro did not run (skipped, or another failure) is unknown and skipped over, as
cargo-bisect-rustc does with `Satisfies::Unknown`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from reprokit.model.verdict import Verdict

Probe = Callable[[str], Verdict | None]


class BisectionInterrupted(Exception):
    """The run of one release was interrupted (SIGINT/SIGTERM): the search stops there."""  # a release -> the repro's verdict there (None: could not be had)


@dataclass
class Bisection:
    versions: list[str]  # oldest first
    seen: dict[str, Verdict] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)  # releases the search had to run (not found recorded)

    def boundary(self) -> tuple[str, str] | None:
        """(last release with the oldest verdict, first release with the newest), when they differ."""
        known = [(v, self.seen[v]) for v in self.versions if _decisive(self.seen.get(v))]
        for (a, va), (b, vb) in zip(known, known[1:], strict=False):
            if _side(va) != _side(vb):
                return a, b
        return None

    def summary(self) -> str:
        """What was tested, in spans of releases, then the boundary, e.g. 'reproduces 2.8.0 – 2.10.0; does not
        reproduce 2.11.0 – 2.15.0; the verdict changes between 2.10.0 and 2.11.0 (releases not tested: 2.9.1)'.
        A span names only tested releases at its ends; untested ones are listed, never assumed."""
        known = [(v, self.seen[v]) for v in self.versions if v in self.seen]
        if not known:
            return "no release gave a verdict"
        spans: list[list] = []
        for version, verdict in known:
            if spans and spans[-1][0] == _words(verdict):
                spans[-1][2] = version
            else:
                spans.append([_words(verdict), version, version])
        parts = [f"{words} {a}" + (f" – {b}" if a != b else "") for words, a, b in spans]
        boundary = self.boundary()
        if boundary:
            parts.append(f"the verdict changes between {boundary[0]} and {boundary[1]}")
        else:
            parts.append("no change among the tested releases")
        untested = [v for v in self.versions if v not in self.seen]
        return "; ".join(parts) + (f" (releases not tested: {', '.join(untested)})" if untested else "")


def _decisive(verdict: Verdict | None) -> bool:
    return verdict in (Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE)


def _side(verdict: Verdict) -> bool:
    return verdict.failed_as_claimed


def _words(verdict: Verdict) -> str:
    return {Verdict.REPRODUCES: "reproduces", Verdict.DOES_NOT_REPRODUCE: "does not reproduce"}.get(
        verdict, str(verdict))


def search(versions: list[str], recorded: dict[str, Verdict], run: Probe) -> Bisection:
    """The first release whose verdict is the newest release's (a lower-bound binary search): `recorded` answers
    first, `run` the rest. The newest release is probed first, then at most ceil(log2(n)) others."""
    result = Bisection(list(versions), dict(recorded))

    def verdict_at(i: int) -> Verdict | None:
        version = versions[i]
        if version not in result.seen:
            result.ran.append(version)
            got = run(version)
            if got is not None:
                result.seen[version] = got
        return result.seen.get(version)

    hi = len(versions) - 1
    while hi >= 0 and not _decisive(verdict_at(hi)):
        hi -= 1
    if hi <= 0:
        return result
    newest = _side(result.seen[versions[hi]])
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        probe = mid
        while probe < hi and not _decisive(verdict_at(probe)):  # unknown: the next decisive release up
            probe += 1
        if probe == hi or _side(result.seen[versions[probe]]) == newest:
            hi = mid
        else:
            lo = probe + 1
    return result


def bisect_case(req_base, case_id: str, versions: list[str], log=print) -> Bisection:
    """Bisect one case of one target over `versions`: the store answers first; each missing release runs through
    the lifecycle (its own environment, recorded in the store like any run)."""
    from reprokit.model import corpus
    from reprokit.run import lifecycle, request
    from reprokit.store.store import Store
    from reprokit.store.views import release_of, releases

    matrix = request.load_root_matrix(req_base.root)
    target = request.target_of(matrix, req_base.target)
    (case_dir,) = corpus.select(corpus.discover(req_base.root / "cases"), [case_id])
    dtype = next((d for d in case_dir.case.requires.dtypes if d in target.dtypes), None)
    if dtype is None:
        from reprokit.model.schema import InputError

        raise InputError(f"cases/{case_id}/case.yaml: requires.dtypes: none is tested on {req_base.target}")
    key = f"{case_id}/repro@{dtype}"
    content = corpus.content_hash(case_dir.path)
    recorded = {}
    for release, records in releases(Store(req_base.store_dir).load(req_base.target, "cases"), req_base.target,
                                     "cases").items():
        rec = next((r for r in records if r.key == key and r.case_hash in (None, content)), None)
        if rec is not None:
            recorded.update({v: rec.verdict for v in versions if release_of(v) == release})

    def run(version: str) -> Verdict | None:
        log(f"bisect: running {key} on torch {version}")
        outcome = lifecycle.run(req_base.model_copy(update={"torch": version, "cases": [case_id]}), log=log)
        if outcome.interrupted:  # Ctrl-C or SIGTERM: the search stops with what it has, it never goes on
            raise BisectionInterrupted(version)
        found = [r for r in outcome.records if r.key == key]
        return found[0].verdict if found else None

    return search(versions, recorded, run)
