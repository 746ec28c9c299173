"""Bring results recorded elsewhere into the store: a store folder copied back from another machine (a GPU box,
a container), or a results.json of the layout used before the store (schema 1). Nothing is re-run or re-judged:
each record keeps its verdict, its environment and its recording time."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from reprokit.model.records import Record, RunHeader, Sitting
from reprokit.model.schema import InputError
from reprokit.store import import_checks
from reprokit.store.store import Store

LEGACY_DROPPED = ("key",)  # derived from case/variant@dtype in the store


def _iso(finished: str) -> str:
    """'2026-11-29 12:21 UTC' (the legacy run header) -> '2026-11-29T12:21:00Z'."""
    try:
        return datetime.strptime(finished, "%Y-%m-%d %H:%M UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        raise InputError(f"run.finished {finished!r}: expected 'YYYY-MM-DD HH:MM UTC'") from None


def from_legacy(path: Path, suite: str | None = None) -> tuple[list[Record], list[RunHeader]]:
    """A schema-1 results.json as records and run headers (one per run, plus one per selection added later)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        target, run, env, rows = data["target"], data.get("run", {}), data["environment"], data["records"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise InputError(f"{path}: not a results file ({type(err).__name__}: {err})") from None
    if data.get("schema") != 1:
        raise InputError(f"{path}: schema {data.get('schema')!r}; only schema 1 results.json files are imported")
    suite = suite or run.get("suite", "cases")
    torch, device = env["torch"], env.get("device_name") or "cpu"
    finished = _iso(run["finished"])
    run_id = f"{finished.replace(':', '').replace('-', '')}-{target}-{suite}"
    jobs = list(run.get("sittings") or [run.get("jobs", 1)])
    sittings = [
        Sitting(
            jobs=j,
            started=finished,
            finished=finished,
            on="",
            ended="deadline" if i < len(jobs) - 1 else "finished",
            wall_seconds=float(run.get("wall_seconds", 0)) if i == 0 else 0.0,
        )
        for i, j in enumerate(jobs)
    ]
    common = dict(
        target=target,
        suite=suite,
        torch=torch,
        device=device,
        environment=env,
        mode=run.get("mode", "host"),
        cache=run.get("cache", "cold"),
        interpreter=run.get("interpreter", "cold"),
        shard=run.get("shard"),
        smoke=bool(run.get("smoke")),
        reprokit=run.get("reprokit", "0.1.0"),
    )
    headers = [
        RunHeader(
            run_id=run_id,
            selection=run.get("selection") or [],
            planned=len(rows),
            not_started=run.get("not_started", 0),
            sittings=sittings,
            **common,
        )
    ]
    added_by_key = {}
    for n, added in enumerate(run.get("added", []), 1):
        when = _iso(added["finished"])
        added_id = f"{run_id}-added-{n}"
        headers.append(
            RunHeader(
                run_id=added_id,
                selection=sorted({k.split("/")[0] for k in added["keys"]}),
                planned=len(added["keys"]),
                sittings=[
                    Sitting(
                        jobs=1,
                        started=when,
                        finished=when,
                        on=added.get("on", ""),
                        wall_seconds=float(added.get("wall_seconds", 0)),
                    )
                ],
                **common,
            )
        )
        added_by_key.update(dict.fromkeys(added["keys"], (added_id, when)))
    records = []
    for row in rows:
        rid, when = added_by_key.get(row.get("key"), (run_id, finished))
        fields = {k: v for k, v in row.items() if k not in LEGACY_DROPPED}
        try:
            records.append(
                Record.model_validate(
                    {
                        **fields,
                        "target": target,
                        "suite": suite,
                        "torch": torch,
                        "device": device,
                        "run_id": rid,
                        "recorded_at": when,
                        "reprokit": common["reprokit"],
                    }
                )
            )
        except ValueError as err:
            raise InputError(f"{path}: record {row.get('key')!r}: {str(err).splitlines()[0]}") from None
    return records, headers


def import_into(store: Store, source: Path, root: Path | None = None, judge=None) -> tuple[int, int, list[str]]:
    """Merge a store folder or a legacy results.json into `store`; returns (records, runs) merged and one line for
    each record refused (import_checks.py; a store folder's records against the case folders of `root`)."""
    refused: list[str] = []
    if source.is_dir():
        loaded = Store(source).load()
        records, headers = loaded.records, list(loaded.runs.values())
        if root is not None:
            records, refused = import_checks.checked(records, root, judge, source)
            taken, recorded = {r.run_id for r in records}, {r.run_id for r in loaded.records}
            headers = [
                import_checks.header_as_a_run_cuts(h) for h in headers if h.run_id in taken or h.run_id not in recorded
            ]  # no run of refused ones
    else:
        suite = "sweep" if source.name.startswith("sweep") else None
        records, headers = from_legacy(source, suite)
    if not records and not headers and not refused:
        raise InputError(f"{source}: no records to import")
    store.merge(records, headers)
    return len(records), len(headers), refused
