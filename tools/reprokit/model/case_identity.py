"""A run's identity from a case folder's content: what of the case a run executes and is judged by (its scripts and
files, case.yaml's executed part, never its description), hashed; the same for the model sweep's folder. A record's
case_hash holds it, and is compared with the case's identity now."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import yaml
from pydantic import ValidationError

from reprokit.model.case import Expect, Requires
from reprokit.model.schema import parse_yaml

# The fields of case.yaml that decide what a run executes and how it is judged: the rest (title, notes, links,
# category, article, documented, outside_compile, issue facts) is description, and editing it supersedes no record.
EXECUTED_FIELDS: dict[str, type[Requires] | type[Expect] | None] = {
    "requires": Requires,
    "expect": Expect,
    "overrides": None,
}


def executed_part(case_yaml: bytes) -> bytes:
    """What of a case.yaml a run executes and is judged by (EXECUTED_FIELDS, defaults filled in) as canonical JSON;
    the bytes themselves where they are no YAML mapping (then every edit counts)."""
    try:
        data = parse_yaml(case_yaml)
    except yaml.YAMLError:
        return case_yaml
    if not isinstance(data, dict):
        return case_yaml
    part: dict[str, object] = {}
    for name, model in EXECUTED_FIELDS.items():
        raw = data.get(name)
        try:
            if name == "overrides":
                part[name] = {k: Expect.model_validate(v).model_dump(mode="json") for k, v in (raw or {}).items()}
            else:
                assert model is not None  # only overrides has no model of its own
                part[name] = model.model_validate(raw if raw is not None else {}).model_dump(mode="json")
        except (ValidationError, AttributeError, TypeError):
            part[name] = raw  # a version today's schema does not read: its own words
    return json.dumps(part, sort_keys=True, separators=(",", ":"), default=str).encode()


def identity_of(files: Iterable[tuple[str, bytes]]) -> str:
    """A run's identity from a case folder's files (path relative to the folder, bytes): every file's name and bytes,
    case.yaml's executed part only; the first 16 hex digits. A folder without case.yaml (sweep/) is all its files."""
    digest = hashlib.sha256()
    for relative, data in sorted(files, key=lambda file: PurePosixPath(file[0]).parts):  # as Path sorts
        body = executed_part(data) if relative == "case.yaml" else data
        digest.update(relative.encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16]


def content_hash(folder: Path) -> str:
    """The identity of a run of the case in `folder` now (identity_of its regular files): what a record's case_hash
    holds and is compared with."""
    return identity_of(
        (str(p.relative_to(folder)), p.read_bytes())
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def contents(cases_dir: Path) -> dict[str, str]:
    """Case id -> content_hash of its folder now, for every folder of cases_dir with a case.yaml (the id is the folder's
    name; a link is no case folder): what a record's case_hash is compared with."""
    if not cases_dir.is_dir():
        return {}
    return {
        d.name: content_hash(d)
        for d in sorted(cases_dir.iterdir())
        if d.is_dir() and not d.is_symlink() and (d / "case.yaml").is_file()
    }


def sweep_structures(sweep_dir: Path) -> list[str]:
    """The sweep's structures: one module of sweep/models/ each."""
    return sorted(p.stem for p in (sweep_dir / "models").glob("*.py") if not p.stem.startswith("_"))


def sweep_structure_id(name: str) -> str:
    return "sweep-" + name.replace("_", "-")


def sweep_contents(sweep_dir: Path) -> dict[str, str]:
    """Structure id -> the sweep's run identity now, what each of its records' case_hash is compared with: the whole
    folder (cell.py runs and judges every cell, grid.yaml sets its parameters), so an edit of any file of it supersedes
    every cell recorded before, as an edit of a case supersedes the case's records."""
    if not (sweep_dir / "cell.py").is_file():
        return {}
    content = content_hash(sweep_dir)
    return {sweep_structure_id(name): content for name in sweep_structures(sweep_dir)}
