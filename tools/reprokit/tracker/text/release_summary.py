"""A case's history across torch releases in one line, from the recorded runs only: "fails on every recorded release
2.8.0..2.15.0", "regressed in 2.13.0, 2.12.1 works", "fixed in 2.12.1, 2.11.0 fails". A nightly build, when one is
recorded, is named beside the releases."""

from __future__ import annotations

from dataclasses import dataclass, field

from reprokit.model.verdict import Verdict
from reprokit.store.views import release_of

BAD, GOOD = Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE


@dataclass(frozen=True)
class ReleaseHistory:
    """(release, verdict) of one case's repro on one target, oldest first; nightly builds apart."""

    releases: list[tuple[str, Verdict]]
    nightly: list[tuple[str, Verdict]]
    errors: dict[str, str] = field(default_factory=dict)  # release -> "Class: first line" of what it raised

    @classmethod
    def of(cls, history: list[tuple[str, str]], errors: dict[str, str] | None = None) -> ReleaseHistory:
        """From (torch build, verdict) pairs as views.repro_history gives them, and what each release raised."""
        pairs = [(release_of(build), Verdict(verdict)) for build, verdict in history]
        return cls([p for p in pairs if "dev" not in p[0]], [p for p in pairs if "dev" in p[0]], dict(errors or {}))

    def regression(self) -> tuple[str, str] | None:
        """(the last good release, the first bad one) when the newest stretch fails and a release before it worked."""
        change = self.last_change()
        return (change[0], change[2]) if change and self.decisive()[-1][1] == BAD else None

    def by_error(self) -> str:
        """'2.8.0..2.13.0: UserError: ...; 2.14.1..2.15.0: InternalTorchDynamoError: ...': consecutive releases that
        raised the same error collapsed ("works" where one did not fail); empty when no error is recorded."""
        if not self.errors:
            return ""
        spans: list[list] = []
        for release, verdict in self.releases:
            said = self.errors.get(release) or ("works" if verdict == GOOD else str(verdict))
            if spans and spans[-1][2] == said:
                spans[-1][1] = release
            else:
                spans.append([release, release, said])
        return "; ".join(f"{a if a == b else f'{a}..{b}'}: {said}" for a, b, said in spans)

    def error_change(self) -> tuple[str, str, str, str] | None:
        """(the first release of the newest failing stretch whose error class is another, the releases before it
        that raised the earlier class, that class, the newer class) where the class changed while it kept failing;
        None where it did not (or nothing raised)."""
        failing = [(r, self.errors[r].split(":", 1)[0]) for r, v in self.releases if v == BAD and self.errors.get(r)]
        if len(failing) < 2 or failing[-1][1] == failing[0][1]:
            return None
        now = failing[-1][1]
        first = next(i for i in range(len(failing) - 1, -1, -1) if i == 0 or failing[i - 1][1] != now)
        if first == 0:
            return None
        before = failing[first - 1][1]
        earlier = [r for r, c in failing[:first] if c == before]
        span = earlier[0] if len(earlier) == 1 else f"{earlier[0]}..{earlier[-1]}"
        return failing[first][0], span, before, now

    def decisive(self) -> list[tuple[str, Verdict]]:
        return [(r, v) for r, v in self.releases if v in (BAD, GOOD)]

    def span(self) -> str:
        return f"{self.releases[0][0]}..{self.releases[-1][0]}" if self.releases else "none"

    def last_change(self) -> tuple[str, Verdict, str] | None:
        """(the release before the newest stretch, its verdict, the stretch's first release) among decisive ones."""
        known = self.decisive()
        for (before, was), (first, now) in reversed(list(zip(known, known[1:], strict=False))):
            if was != now and now == known[-1][1]:
                return before, was, first
        return None

    def line(self) -> str:
        known = self.decisive()
        if not known:
            return "no recorded release gave a verdict" + self._nightly()
        newest, now = known[-1]
        if all(v == now for _, v in known):
            word = "fails" if now == BAD else "works"
            if len(known) == len(self.releases):
                changed = self.error_change() if now == BAD else None
                how = f"; since {changed[0]} with {changed[3]}, before with {changed[2]}" if changed else ""
                return f"{word} on every recorded release {self.span()}{how}" + self._nightly()
            others = sorted({str(v) for _, v in self.releases if v not in (BAD, GOOD)})
            return (
                f"{word} on {known[0][0]}..{newest} ({len(known)} of {len(self.releases)} recorded releases; "
                f"the others: {', '.join(others)})" + self._nightly()
            )
        change = self.last_change()
        assert change is not None  # not every verdict is the newest (above): the last one that differs is a change
        before, _, first = change
        if now == BAD:
            return f"regressed in {first}, {before} works (newest recorded: {newest})" + self._nightly()
        return f"fixed in {first}, {before} fails (newest recorded: {newest})" + self._nightly()

    def _nightly(self) -> str:
        if not self.nightly:
            return ""
        build, verdict = self.nightly[-1]
        return f"; nightly {build}: {'fails' if verdict == BAD else 'works' if verdict == GOOD else verdict}"

    def table(self) -> list[str]:
        """The Markdown rows of every recorded release, nightly last."""
        rows = ["| torch | this repro |", "| --- | --- |"]
        return rows + [f"| {r} | {v.symbol} {v} |" for r, v in [*self.releases, *self.nightly]]
