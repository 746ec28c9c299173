"""The results store: every record ever kept, per target, suite and torch, as JSON lines that diff well.

    results/<target>/<suite>/<torch>.jsonl         one record per line, sorted by device, case, variant, dtype
    results/<target>/<suite>/<torch>.output.jsonl  the records' output tails (stderr, stdout), in the same order
    results/<target>/<suite>/<torch>.runs.jsonl    one RunHeader per line (environment, mode, sittings)
    results/<target>/.lock                       held while a run merges into the target's files
    results/<target>/.journal/<run>.<pid>.jsonl  a run in progress: its header, then each finished record

A merge replaces only records of the same identity (target, suite, torch, device, case, variant, dtype); it never
drops another torch version's or another case's records, and a skipped run never replaces one that ran (a machine
with fewer GPUs does not erase what a larger one observed). Files are replaced atomically under the target's lock, so
concurrent runs lose nothing and a reader never sees half a file. A journal whose owner is gone (killed) is
recovered by the next run: its records are merged, the processes it left are ended.

The output tails are half of a record's bytes and are read only by the pages that quote them (JUnit failures, the
FP8 configurations, the sweep's cells), so they are kept apart: `load(outputs=False)` reads the records alone and
`Loaded.with_outputs` fills in the tails of the few records a page shows (bench figure 5: 100,000 records).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.model.case_identity import contents, sweep_contents
from reprokit.model.records import SUITES, Record, RunHeader, parse_header, parse_record, store_path_problem
from reprokit.model.schema import InputError
from reprokit.store.journal import Journal, Recovered, end_processes, read_journal
from reprokit.store.jsonl_files import (
    collector_paused,
    fill_outputs,
    read_lines,
    read_outputs,
    read_records,
    write_lines,
    write_records,
)
from reprokit.store.machines import machine_of


def _safe_name(torch: str) -> str:
    """A torch version as a file name (versions are PEP 440: letters, digits, '.', '+', '-', '_')."""
    return "".join(c if c.isalnum() or c in ".+-_" else "_" for c in torch)


@dataclass
class Loaded:
    records: list[Record] = field(default_factory=list)
    runs: dict[str, RunHeader] = field(default_factory=dict)
    outputs_in: Store | None = None  # the store whose output files hold the tails these records were loaded without
    # case id -> the case folder's content now (model/case_identity.content_hash): of the corpus beside the store when loaded,
    # or set by views.know_content: a record of other content is superseded. Empty: every record counts as current.
    content: dict[str, str] = field(default_factory=dict)

    def add(self, part: Loaded) -> None:
        self.records += part.records
        self.runs.update(part.runs)
        self.outputs_in = self.outputs_in or part.outputs_in

    def with_outputs(self, records: list[Record]) -> list[Record]:
        """records with their output tails, read from the store for records loaded without them. The tails are
        filled in place: they are fields of these very records that the load left unread, not a change to them."""
        if self.outputs_in is None:
            return records
        for file_key in sorted({(r.target, r.suite, r.torch) for r in records}):
            fill_outputs(
                [r for r in records if (r.target, r.suite, r.torch) == file_key],
                read_outputs(self.outputs_in.file(*file_key, "output")),
            )
        return records


class Store:
    def __init__(self, folder: Path):
        self.folder = folder

    # ------------------------------------------------------------ reading

    def targets(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir() and not p.name.startswith("."))

    def file(self, target: str, suite: str, torch: str, kind: str = "") -> Path:
        """The records file of one target, suite and torch; kind "runs" or "output": its companion."""
        problem = store_path_problem(target, suite, torch)
        if problem:
            raise InputError(f"{self.folder}: {problem}")
        return self.folder / target / suite / (_safe_name(torch) + (f".{kind}" if kind else "") + ".jsonl")

    def _files(self, target: str | None, suite: str | None) -> Iterator[tuple[Path, Path, Path]]:
        for t in [target] if target else self.targets():
            for s in [suite] if suite else SUITES:
                folder = self.folder / t / s
                if folder.is_dir():
                    for path in sorted(folder.glob("*.jsonl")):
                        if not path.name.endswith((".runs.jsonl", ".output.jsonl")):
                            stem = path.name.removesuffix(".jsonl")
                            yield path, path.with_name(f"{stem}.runs.jsonl"), path.with_name(f"{stem}.output.jsonl")

    def load(self, target: str | None = None, suite: str | None = None, outputs: bool = True) -> Loaded:
        """The records (with their output tails unless outputs is false: see Loaded.with_outputs) and run headers."""
        loaded = Loaded(outputs_in=None if outputs else self)
        with collector_paused():
            for records_file, runs_file, output_file in self._files(target, suite):
                loaded.records += (
                    read_records(records_file, output_file) if outputs else read_lines(records_file, parse_record)
                )
                if runs_file.exists():
                    loaded.runs.update((h.run_id, h) for h in read_lines(runs_file, parse_header))
        # a store beside its corpus: records of earlier case or sweep content are superseded (an --out store has no
        # corpus beside it: every record counts)
        loaded.content = contents(self.folder.parent / "cases") | sweep_contents(self.folder.parent / "sweep")
        return loaded

    # ------------------------------------------------------------ writing

    @contextmanager
    def locked(self, target: str) -> Iterator[None]:
        """The target's lock: a run merging into its files waits here for another one to finish merging."""
        problem = store_path_problem(target, "cases", "0")
        if problem:
            raise InputError(f"{self.folder}: {problem}")
        (self.folder / target).mkdir(parents=True, exist_ok=True)
        with open(self.folder / target / ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def merge(self, records: Iterable[Record], headers: Iterable[RunHeader] = ()) -> list[Path]:
        """Add records (replacing those of the same identity) and run headers; returns the files written."""
        by_file: dict[tuple[str, str, str], tuple[list[Record], list[RunHeader]]] = {}
        for rec in records:
            by_file.setdefault((rec.target, rec.suite, rec.torch), ([], []))[0].append(rec)
        for head in headers:
            by_file.setdefault((head.target, head.suite, head.torch), ([], []))[1].append(head)
        written = []
        for target in sorted({t for t, _, _ in by_file}):
            with self.locked(target):
                for (t, suite, torch), (recs, heads) in sorted(by_file.items()):
                    if t != target:
                        continue
                    records_file, runs_file = self.file(t, suite, torch), self.file(t, suite, torch, "runs")
                    if recs:
                        output_file = self.file(t, suite, torch, "output")
                        runs = {h.run_id: h for h in read_lines(runs_file, parse_header)} | {h.run_id: h for h in heads}
                        kept = _replaced(
                            {r.identity: r for r in read_records(records_file, output_file)},
                            recs,
                            lambda rec, runs=runs: machine_of(runs.get(rec.run_id)),
                        )
                        written += write_records(records_file, output_file, [kept[k] for k in sorted(kept)])
                    if heads:
                        runs = {h.run_id: h for h in read_lines(runs_file, parse_header)}
                        runs.update((h.run_id, h) for h in heads)
                        write_lines(runs_file, [runs[k] for k in sorted(runs)])
                        written.append(runs_file)
        return written

    def forget(self, target: str, suite: str, torch: str, keep) -> int:
        """Drop the records of one target, suite and torch for which keep(record) is false; returns how many."""
        path, output_file = self.file(target, suite, torch), self.file(target, suite, torch, "output")
        with self.locked(target):
            records = read_records(path, output_file)
            kept = [r for r in records if keep(r)]
            write_records(path, output_file, kept)
        return len(records) - len(kept)

    def forget_keys(self, target: str, suite: str, torch: str, globs: list[str]) -> int:
        """`reprokit forget`: drop the records whose key matches one of the globs; refused where none does (a
        mistyped key would otherwise look done)."""
        import fnmatch

        dropped = self.forget(target, suite, torch, lambda r: not any(fnmatch.fnmatchcase(r.key, g) for g in globs))
        if not dropped:
            raise InputError(
                f"results/{target}/{suite}/{torch}.jsonl: no record matches {globs[0]!r} "
                "(keys look like case/variant@dtype)"
            )
        return dropped

    # ------------------------------------------------------------ journals of runs in progress

    def journal_folder(self, target: str) -> Path:
        return self.folder / target / ".journal"

    def open_journal(self, header: RunHeader, token: str) -> Journal:
        return Journal(self.journal_folder(header.target) / f"{header.run_id}.{os.getpid()}.jsonl", header, token)

    def recover(self, target: str) -> list[Recovered]:
        """Merge the journals of runs that were killed (their owner is gone) and end the processes they left."""
        found = []
        folder = self.journal_folder(target)
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            with open(path, "a+", encoding="utf-8") as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its run is alive
                header, token, records = read_journal(path)
                ended = end_processes(token) if token else []
                if header is not None:
                    last = header.sittings[-1] if header.sittings else None
                    sittings = [*header.sittings[:-1], last.model_copy(update={"ended": "killed"})] if last else []
                    header = header.model_copy(update={"sittings": sittings})
                    self.merge(records, [header])
                path.unlink()
                found.append(Recovered(path, header, records, ended))
        return found


def merge_in_memory(old: list[Record], new: list[Record], runs: dict[str, RunHeader] | None = None) -> list[Record]:
    """What Store.merge writes, for rendering from memory: new records replace those of the same identity."""
    kept = _replaced({r.identity: r for r in old}, new, lambda rec: machine_of((runs or {}).get(rec.run_id)))
    return [kept[k] for k in sorted(kept)]


def _replaced(kept: dict, new: Iterable[Record], machine=lambda rec: "") -> dict:
    """kept with each new record in place of the one of its identity, except that a run that did not happen (a skip:
    one GPU where the case needs two) never replaces one that ran of the same case content: a skip is not an
    observation. A skip of changed content does replace it (a case edited so that it now skips here): what ran was
    another case. A record without a content hash (stored before hashes were kept) is never judged changed: a two-GPU
    run of those stays until `reprokit forget` drops it. A record older than the one stored never replaces it.
    A record that replaces one of the same content made on another machine (machine(rec): the CPU model and GPU, ""
    when unknown) keeps that machine's verdict in `on_other_machines`, with those the replaced one kept."""
    for rec in new:
        before = kept.get(rec.identity)
        if before is not None and before.recorded_at > rec.recorded_at:
            continue  # an import of an older copy of the store never puts back what a later run replaced
        if (
            before is None
            or rec.verdict.ran
            or not before.verdict.ran
            or (rec.case_hash and before.case_hash and rec.case_hash != before.case_hash)
        ):
            kept[rec.identity] = _with_other_machines(rec, before, machine) if before is not None else rec
    return kept


def _with_other_machines(rec: Record, before: Record, machine) -> Record:
    if not (rec.verdict.ran and before.verdict.ran and rec.case_hash and rec.case_hash == before.case_hash):
        return rec
    here, there = machine(rec), machine(before)
    others = {**(before.on_other_machines or {}), **({there: str(before.verdict)} if there else {})}
    others.pop(here, None)
    if not here or not others or (rec.on_other_machines or {}) == others:
        return rec
    return rec.model_copy(update={"on_other_machines": {**others, **(rec.on_other_machines or {})}})
