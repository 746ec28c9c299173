"""One sitting of a run in this Python environment: the runs to do under a journal and the stop switch (SIGINT and
SIGTERM), a line per finished run (rich's live bar on a terminal), and the merge of what finished, with the run's
header, into the store."""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
import time
import uuid
from typing import Any

from reprokit.model import corpus
from reprokit.model.records import Record, RunHeader
from reprokit.model.untrusted_text import one_line
from reprokit.run.process_groups import Stopper
from reprokit.run.request import RunOutcome, RunRequest, shown_path
from reprokit.run.scheduler import Identity, RunOptions, now_iso, run_all
from reprokit.run.warm import WarmPool
from reprokit.store import import_checks
from reprokit.store.store import Store


@dataclasses.dataclass
class Executed:
    outcome: RunOutcome
    header: RunHeader  # with the sitting's end


def execute(
    req: RunRequest, todo: list[corpus.CaseRun], header: RunHeader, store: Store, opts: RunOptions, log
) -> Executed:
    """Run `todo` under a journal and the stop switch, then merge what finished (and the run's header) into the
    store."""
    token = uuid.uuid4().hex
    stopper = Stopper(token)
    journal = store.open_journal(header, token)
    outcome = RunOutcome()
    started = time.monotonic()
    sitting = header.sittings[-1]
    with _stop_on_signals(stopper, log):
        pool = WarmPool(req.interpreter, token) if req.warm else None
        try:
            opts = dataclasses.replace(
                opts, deadline=started + req.deadline if req.deadline else None, warm=pool, stopper=stopper
            )
            progress = _progress(len(todo), log)

            def on_done(record: Record) -> None:
                journal.append(record)
                progress(record)

            identity = Identity(req.target, req.suite, header.torch, header.device, header.run_id)
            outcome.records = run_all(todo, identity, opts, on_done)
        finally:
            if pool is not None:
                pool.close()
    outcome.interrupted = stopper.stopped
    outcome.not_started = len(todo) - len(outcome.records)
    ended = "interrupted" if outcome.interrupted else ("deadline" if outcome.not_started else "finished")
    header = header.model_copy(
        update={
            "not_started": outcome.not_started,
            "sittings": [
                *header.sittings[:-1],
                sitting.model_copy(
                    update={"finished": now_iso(), "wall_seconds": round(time.monotonic() - started, 1), "ended": ended}
                ),
            ],
        }
    )
    files = store.merge(outcome.records, [header])
    if store.folder.resolve() != (req.root / "results").resolve():  # a store that travels: its records signed
        import_checks.sign(
            store.folder, [r for r in store.load(req.target, req.suite).records if r.run_id == header.run_id]
        )
    journal.close(remove=True)
    where = ", ".join(
        str(shown_path(p, req.root)) for p in files if not p.name.endswith((".runs.jsonl", ".output.jsonl"))
    )
    if outcome.interrupted:
        log(
            f"interrupted: kept {len(outcome.records)} finished records in {where or 'the store'}; "
            f"{outcome.not_started} runs not recorded (killed in flight or not started); continue with --resume"
        )
    else:
        if outcome.not_started:
            log(f"{outcome.not_started} runs not started before the --deadline; continue with --resume")
        log(f"recorded {len(outcome.records)} runs in {where or 'the store'}")
    return Executed(outcome, header)


class _stop_on_signals:
    """SIGINT and SIGTERM pull the stopper (in the main thread only; elsewhere signals stay as they are)."""

    def __init__(self, stopper: Stopper, log):
        self.stopper, self.log = stopper, log
        self.saved: dict[signal.Signals, Any] = {}  # each signal's handler before ours

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if not self.stopper.stopped:
            self.log(f"{signal.Signals(signum).name}: starting nothing new, killing the runs in flight")
        self.stopper.stop()

    def __exit__(self, *exc) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


def console_log(line: str) -> None:
    """The log of a run started from the command line: each line printed at once. On a terminal a run logging
    here shows rich's live bar (`_progress`); a caller's own log (bisect's inner runs, a test) gets plain lines."""
    print(line, flush=True)


def _progress(total: int, log):
    """One line per finished run (rich's live bar on a terminal)."""
    done = [0]
    if sys.stdout.isatty() and log in (print, console_log):  # rich draws on stdout, where the lines go
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("running", total=total)

        def tick(rec: Record) -> None:
            done[0] += 1
            bar.console.print(
                f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s) {one_line(rec.why)}"
                + (f" [{rec.confirmed_alone}]" if rec.confirmed_alone else ""),
                markup=False,
            )
            bar.advance(task)
            if done[0] == total:
                bar.stop()

        return tick

    def line(rec: Record) -> None:
        done[0] += 1
        log(
            f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s) {one_line(rec.why)}"
            + (f" [{rec.confirmed_alone}]" if rec.confirmed_alone else "")
        )

    return line
