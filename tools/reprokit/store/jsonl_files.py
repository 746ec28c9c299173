"""The store's files: JSON lines written atomically, records apart from their output tails, read back with the
cyclic collector paused."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reprokit.model.records import Record, dump, parse_record, stored_fields
from reprokit.model.schema import InputError

OUTPUT_FIELDS = ("stderr_tail", "stdout_tail")


OUTPUT_KEY = ("device", "case", "variant", "dtype")  # a record's identity within its file


@contextmanager
def collector_paused() -> Iterator[None]:
    """Parsing makes some thirty objects a record and no cyclic garbage; the cyclic collector's passes over the growing
    heap took half the time of loading 100,000 records (bench figure 5). What was loaded is then moved out of the
    collector's sight (gc.freeze): records live as long as the command, and its later passes over them took half the
    time of rendering them. Frozen objects are still freed when their last reference goes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def read_lines(path: Path, parse) -> list:
    if not path.exists():
        return []
    lines = path.read_bytes().decode("utf-8").split("\n")  # not splitlines(): U+2028 and the like may sit in a string
    if parse is parse_record:  # the bulk of a store: validated without a per-line wrapper, the line found on error
        try:
            return [Record.model_validate_json(line) for line in lines if line.strip()]
        except ValueError:
            pass  # parse_record below names the file, the line and the field
    return [parse(line, f"{path}:{n}") for n, line in enumerate(lines, 1) if line.strip()]


def write_lines(path: Path, models: list) -> None:
    write_text_lines(path, [dump(m) for m in models])


def write_text_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_records(records_file: Path, output_file: Path, records: list[Record]) -> list[Path]:
    """The records without their tails, and the tails (of the records that have any) in the output file."""
    lines, outputs = [], []
    for rec in records:
        data = stored_fields(rec)
        tails = {f: data.pop(f) for f in OUTPUT_FIELDS}
        lines.append(json.dumps(data, sort_keys=True, ensure_ascii=False))
        if any(tails.values()):
            outputs.append(
                json.dumps({**{f: data[f] for f in OUTPUT_KEY}, **tails}, sort_keys=True, ensure_ascii=False)
            )
    write_text_lines(records_file, lines)
    if outputs or output_file.exists():
        write_text_lines(output_file, outputs)
        return [records_file, output_file]
    return [records_file]


def read_records(records_file: Path, output_file: Path) -> list[Record]:
    records = read_lines(records_file, parse_record)
    fill_outputs(records, read_outputs(output_file))
    return records


def fill_outputs(records: list[Record], tails: dict[tuple, dict[str, str]]) -> None:
    """Put each record's tails (keyed as in its output file) into it: fields its load left unread, not a change; the
    model is frozen to callers, the store completes its own load."""
    for rec in records:
        found = tails.get((rec.device, rec.case, rec.variant, rec.dtype))
        if found:
            rec.__dict__.update(found)


def read_outputs(path: Path) -> dict[tuple, dict[str, str]]:
    """(device, case, variant, dtype) -> the tails, from an output file; a malformed line is refused with one line."""
    found: dict[tuple, dict[str, str]] = {}
    if not path.exists():
        return found
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                raise InputError(f"{path}:{n}: not a JSON object") from None
            bad = [] if isinstance(data, dict) else ["the line"]
            bad = bad or [f for f in (*OUTPUT_KEY, *OUTPUT_FIELDS) if not isinstance(data.get(f), str)]
            bad = bad or sorted(set(data) - {*OUTPUT_KEY, *OUTPUT_FIELDS})
            if bad:
                raise InputError(
                    f"{path}:{n}: {bad[0]}: an output line holds {', '.join(OUTPUT_KEY)} and "
                    f"{', '.join(OUTPUT_FIELDS)}, each a string, and nothing else"
                )
            found[tuple(data[f] for f in OUTPUT_KEY)] = {f: data[f] for f in OUTPUT_FIELDS}
    return found
