"""The site's data for machines: results.json, every record of the store as `reprokit history --json` gives it (the
same fields, as strings) with its suite (cases: the repro corpus; sweep: the model sweep), the case hash it ran with,
the verdicts other machines gave it (null: none recorded) and whether it is current (the record the pages show for its
question; false: superseded by the case's later content or by a newer record, kept as history), and
results.schema.json, the records' own schema (the pydantic `Record`) cut to those fields. One record per line, in
`history`'s order: the same store, the same bytes."""

from __future__ import annotations

import gzip
import json

from reprokit.model.records import Record
from reprokit.store.views import HISTORY_FIELDS

FIELDS = (*HISTORY_FIELDS, "suite", "run_id", "case_hash", "on_other_machines")


def entry(rec: Record, current: bool = True) -> dict:
    """`history --json`'s object for the record, its suite, its case hash (null: recorded before hashes were kept) and
    whether it is current."""
    return {f: str(getattr(rec, f)) for f in HISTORY_FIELDS} | {
        "suite": rec.suite,
        "run_id": rec.run_id,
        "case_hash": rec.case_hash,
        "on_other_machines": rec.on_other_machines,
        "current": current,
    }


def results_json(records: list[Record], current: set) -> str:
    """records in history_rows' order (store/views.py), each marked current when its identity is in `current`
    (views.current_identities). `<`, `>` and `&` are written as \\u escapes (the same strings), so that no reader
    that sniffs markup finds any in what a run wrote."""
    return (
        "[\n"
        + ",\n".join(_markup_free(json.dumps(entry(r, r.identity in current), ensure_ascii=True)) for r in records)
        + "\n]\n"
    )


def _markup_free(text: str) -> str:
    """JSON text with <, > and & escaped: they occur only inside its strings, where an escape is the same character."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def results_schema() -> str:
    """JSON Schema (2020-12) of results.json: an array of `Record`s restricted to the published fields."""
    full = Record.model_json_schema()
    properties = {f: full["properties"][f] for f in FIELDS} | {
        "current": {
            "type": "boolean",
            "description": "the record the pages show for its question; false: superseded (history)",
        }
    }
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "results.json: the recorded runs of the torch.compile repro corpus",
        "type": "array",
        "items": {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
            "required": [
                *(f for f in FIELDS if f in full.get("required", []) or f in ("suite", "case_hash")),
                "current",
            ],
        },
        "$defs": full.get("$defs", {}),  # the enums the fields refer to (Verdict)
    }
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


BIG = 100_000  # bytes: a page or data file this large is also written gzip-compressed beside itself


def compressed(name: str, data: bytes) -> bytes | None:
    """The gzip copy of a big table or data file (matrix.html, a grid, results.json), for a host that serves a
    precompressed file where the browser accepts it (nginx's gzip_static, Caddy's precompressed, a CDN); None for a
    small or static file. No time and no name in its header: the same bytes from the same file."""
    if len(data) < BIG or not name.endswith((".html", ".json")):
        return None
    return gzip.compress(data, compresslevel=9, mtime=0)
