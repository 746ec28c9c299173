"""Write committed records back as a new record would hold them: every records file read through the record type
(whose validators cut the recording machine's paths: model/untrusted_text.without_install_paths), its output tails
cut by the same rule, and both written again where that changed a line. Re-runnable: a store already written back is left untouched, so it is run
after each import of records made elsewhere and after each change of the cutting rule.

    python -m reprokit.store.write_back [RESULTS_DIR]     (default: the repository's results/)
"""

from __future__ import annotations

import sys
from pathlib import Path

from reprokit.model.untrusted_text import without_install_paths
from reprokit.store.jsonl_files import OUTPUT_FIELDS, read_records, write_records


def record_files(results: Path) -> list[tuple[Path, Path]]:
    """(records file, its output file) for every target and suite of a store."""
    return [
        (path, path.with_name(path.name.removesuffix(".jsonl") + ".output.jsonl"))
        for path in sorted(results.glob("*/*/*.jsonl"))
        if not path.name.endswith((".runs.jsonl", ".output.jsonl"))
    ]


def _text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def write_back(results: Path) -> list[Path]:
    """The files of `results` that changed (written atomically, each pair as the store writes it)."""
    changed: list[Path] = []
    for records_file, output_file in record_files(results):
        before = (_text(records_file), _text(output_file))
        records = read_records(records_file, output_file)
        for rec in records:  # the tails are filled in unvalidated (jsonl_files.fill_outputs): cut here as a new
            rec.__dict__.update(
                {
                    f: without_install_paths(getattr(rec, f))
                    for f in OUTPUT_FIELDS  # record's are
                    if isinstance(getattr(rec, f), str)
                }
            )
        written = write_records(records_file, output_file, records)  # same order, same format as the store's own
        changed += [
            path
            for path, old in zip((records_file, output_file), before, strict=True)
            if path in written and _text(path) != old
        ]
    return changed


def main(argv: list[str]) -> int:
    results = Path(argv[0]) if argv else Path(__file__).resolve().parents[3] / "results"
    if not results.is_dir():
        print(f"{results}: no such folder (a results store: results/TARGET/SUITE/TORCH.jsonl)", file=sys.stderr)
        return 2
    changed = write_back(results)
    for path in changed:
        print(f"wrote {path}")
    print(f"{len(changed)} file(s) of {results} written back" if changed else f"{results}: nothing to write back")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
