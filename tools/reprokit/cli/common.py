"""What every command group shares: the repository root, the store and reports folders an --out moves.

The parsers read this module's help texts, so it imports the package's models only inside the functions that a
command calls (`reprokit --help` stays free of pydantic)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reprokit.model import corpus
    from reprokit.store.store import Store

TARGET_HELP = "a target of matrix.yaml (e.g. cpu, h100; `reprokit targets` lists them): its device, dtypes and pin"
OUT_HELP = "folder holding results/ (the store) and reports/ (default: the repository's)"


def root_of(args: argparse.Namespace) -> Path:
    """--root, else the repository around the working directory: the nearest folder holding matrix.yaml, from the
    working directory up (so that a command runs from any folder of the checkout)."""
    from reprokit.run.request import load_root_matrix

    root = Path(args.root).resolve() if args.root else found_root(Path.cwd())
    load_root_matrix(root)
    return root


def found_root(start: Path) -> Path:
    """The nearest folder from `start` up that holds matrix.yaml; `start` itself when none does (refused then)."""
    start = start.resolve()
    return next((folder for folder in (start, *start.parents) if (folder / "matrix.yaml").is_file()), start)


def store_of(args: argparse.Namespace, root: Path) -> Store:
    from reprokit.store.store import Store

    return Store((Path(args.out).resolve() if getattr(args, "out", None) else root) / "results")


def reports_of(args: argparse.Namespace, root: Path) -> Path:
    return Path(args.out).resolve() / "reports" if getattr(args, "out", None) else root / "reports"


def case_of(root: Path, case_id: str) -> corpus.CaseDir:
    from reprokit.model import corpus
    from reprokit.model.schema import InputError

    found = {c.case.id: c for c in corpus.discover(root / "cases")}.get(case_id)
    if found is None:
        raise InputError(f"{case_id!r}: no such case (see `reprokit list`)")
    return found
