"""`reprokit bisect --from SCRIPT`: a user's own script across torch releases, without adding a case.

What a user who just hit a compile bug asks first: does it work on an older or a newer torch? The script becomes a
case in a scratch repository (matrix.yaml copied, the oracle from the new-case flags or, without one, proposed by a
contained run on this torch), and the same bisection as `reprokit bisect` runs it on the releases it needs, each in
its own environment, contained like every run. `--keep` makes it a case of the repository instead, its runs
recorded in the store."""

from __future__ import annotations

import re
import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from reprokit.contrib import bisect_case, bisection, new_case
from reprokit.model.schema import InputError


@dataclass(frozen=True)
class ScriptBisection:
    case_id: str
    found: bisection.Bisection
    kept: Path | None  # the case folder, with --keep
    scratch: Path | None = None  # the scratch repository, kept when the answer is undecided (its records say why)

    def table(self) -> list[str]:
        rows = ["| torch | verdict |", "| --- | --- |"]
        return rows + [
            f"| {v} | {self.found.seen[v].verdict.symbol} {self.found.seen[v].verdict} |"
            if v in self.found.seen
            else f"| {v} | not tested |"
            for v in self.found.versions
        ]


def case_id_for(script: Path) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", script.stem.lower()).strip("-") or "script"
    return f"bisect-{slug}"[:80].rstrip("-")


def bisect_from(
    req_base,
    script: Path,
    versions: list[str],
    oracle: dict | None,
    timeout: int | None,
    keep_id: str | None = None,
    log=print,
    max_envs: int | None = None,
) -> ScriptBisection:
    """Bisect `script` over `versions` (oldest first). req_base: the run request of the repository (target, jobs,
    index, --force); keep_id: make it the repository's case of that id (its runs recorded in its store)."""
    if not script.is_file():
        raise InputError(f"--from {script}: no such file")
    case_id = keep_id or case_id_for(script)
    scratch = None if keep_id else Path(tempfile.mkdtemp(prefix="reprokit-bisect-"))
    keep_scratch = False
    on_term = _interrupt_on_sigterm()
    try:
        root = scratch if scratch is not None else req_base.root  # a scratch repository unless keep_id
        if scratch is not None:
            shutil.copy(req_base.root / "matrix.yaml", scratch / "matrix.yaml")
            (scratch / "cases").mkdir()
            log(
                f"bisect --from: the script is case {case_id} of a scratch repository, {scratch}: its records stay "
                "there, deleted at the end unless the answer is undecided (--keep adds it to this repository)"
            )
        folder = new_case.create(
            root / "cases",
            case_id,
            source=script,
            title=None,
            category=None,
            links=[],
            oracle=oracle,
            timeout=timeout,
            observe_run=oracle is None,
            log=log,
        )
        # scratch: its expected state is whatever ran (nothing to gate a script that is no case of the repository)
        req = req_base.model_copy(
            update={
                "root": root,
                "out": req_base.out if keep_id else None,
                "render": False,
                "update_expected": scratch is not None,
            }
        )
        found = bisect_case.bisect_case(req, case_id, versions, log=log, max_envs=max_envs)
        keep_scratch = scratch is not None and found.answer().kind == "undecided"
        return ScriptBisection(case_id, found, folder if keep_id else None, scratch if keep_scratch else None)
    finally:
        if scratch is not None and not keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)


def _interrupt_on_sigterm():
    """SIGTERM outside a run (the first contained run, an environment being built) ends the search as Ctrl-C does, so
    that the scratch repository is deleted on the way out; a run's own handler takes over while it runs. Returns
    the handler it replaced (None off the main thread, where signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)
