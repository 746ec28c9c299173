"""The runs of one request: the cases (or the sweep's cells) it selects, each variant and dtype, on its target, in
its shard."""

from __future__ import annotations

import fnmatch
import sys

from reprokit.model import case_identity, corpus
from reprokit.model.matrix import Target
from reprokit.model.schema import InputError
from reprokit.run import sweep
from reprokit.run.request import RunRequest


def check_selection(req: RunRequest) -> None:
    """A --case that selects nothing, refused from the case folders alone: before torch is imported, the machine's
    facts collected or an environment built (the plan below says the same, after all that)."""
    if not req.cases:
        return
    if req.suite == "sweep":
        ids = [case_identity.sweep_structure_id(name) for name in case_identity.sweep_structures(req.root / "sweep")]
        if not any(fnmatch.fnmatchcase(c, g) for c in ids for g in req.cases):
            raise InputError(f"--case {req.cases[0]!r}: no sweep structure matches (ids are sweep-<model>)")
        return
    unread: list[str] = []
    found = corpus.discover(req.root / "cases", on_error=unread.append)
    try:
        corpus.select(found, req.cases)
    except InputError:
        for message in unread:  # the case asked for may be one of the folders that could not be read: say which
            print(message, file=sys.stderr)
        raise


def plan(req: RunRequest, target: Target, facts: dict) -> list[corpus.CaseRun]:
    if req.suite == "sweep":
        runs = sweep.plan(req.root / "sweep", req.target, target, facts, smoke=req.smoke)
        chosen = {
            c for c in {r.case.id for r in runs} if not req.cases or any(fnmatch.fnmatchcase(c, g) for g in req.cases)
        }
        if req.cases and not chosen:
            raise InputError(f"--case {req.cases[0]!r}: no sweep structure matches (ids are sweep-<model>)")
        runs = [r for r in runs if r.case.id in chosen]
    else:
        found = corpus.discover(req.root / "cases", on_error=lambda message: print(message, file=sys.stderr))
        runs = corpus.plan(corpus.select(found, req.cases), req.target, target, facts)
    if req.dtypes:
        in_dtypes = [r for r in runs if r.dtype in req.dtypes]
        if runs and not in_dtypes:
            raise InputError(
                f"--dtype {req.dtypes[0]!r}: no selected run is in that dtype (they are in "
                f"{', '.join(sorted({r.dtype for r in runs}))})"
            )
        runs = in_dtypes
    return corpus.shard(runs, req.shard)
