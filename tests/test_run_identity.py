"""A run's identity is what it executes and how it is judged (the scripts, the oracle, requires, the limits):
retitling a case, adding a declaration or editing its notes, links or category leaves every one of its records
current; and records made while the hash covered the whole folder get their version's identity from git history,
the same hash a re-record would store."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from reprokit.model import case_identity, corpus
from reprokit.model.attribution import outside_compile
from reprokit.model.case import load_case
from reprokit.store import rehash
from reprokit.store.store import Store
from reprokit.store.views import know_content, releases
from support import record

ROOT = Path(__file__).resolve().parents[1]
CASE = "aot-autograd-backward-inside-compiled-fn"  # an upstream case, no declaration yet


def edited(change):
    """A case.yaml edit: the YAML read, changed by `change(data)`, written back (reformatted: formatting is no edit)."""

    def edit(text: str) -> str:
        data = yaml.safe_load(text)
        change(data)
        return yaml.safe_dump(data, sort_keys=False)

    return edit


def _declare_documented(data: dict) -> None:
    data.pop("outside_compile", None)
    data["documented"] = "https://pytorch.org/docs/stable/torch.compiler.html"


DESCRIPTION_EDITS = {
    "retitled": edited(lambda d: d.update(title="Retitled - " + d["title"])),
    "declared documented": edited(_declare_documented),
    "notes and links": edited(
        lambda d: d.update(notes="a note", links=[*d.get("links", []), "https://github.com/pytorch/pytorch/issues/1"])
    ),
    "category": edited(lambda d: d.update(category="diagnosis")),
    "declared outside compile": edited(
        lambda d: d.update(outside_compile={"kind": "invalid-usage", "why": "no such op"})
    ),
}
EXECUTED_EDITS = {
    "oracle": edited(lambda d: d["expect"]["repro"].update(match="another message")),
    "limits": edited(lambda d: d.setdefault("requires", {}).update(timeout=17)),
    "devices": edited(lambda d: d.setdefault("requires", {}).update(devices=["cuda"])),
}


def a_case(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "cases" / CASE, root / "cases" / CASE)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    return root, root / "cases" / CASE / "case.yaml"


def current_keys(root: Path) -> set[str]:
    loaded = know_content(Store(root / "results").load(), corpus.discover(root / "cases"))
    return {r.key for recs in releases(loaded, "cpu", "cases").values() for r in recs}


@pytest.mark.parametrize("edit", DESCRIPTION_EDITS, ids=list(DESCRIPTION_EDITS))
def test_retitling_a_case_or_adding_a_declaration_leaves_every_one_of_its_records_current(tmp_path, edit):
    root, yml = a_case(tmp_path)
    before = case_identity.content_hash(yml.parent)
    Store(root / "results").merge(
        [
            record(
                case=CASE,
                variant=v,
                case_hash=before,
                run_id=f"r{v}",
                **({} if v == "repro" else {"verdict": "fix-works"}),
            )
            for v in ("repro", "fixed")
        ]
    )
    assert current_keys(root) == {f"{CASE}/repro@float32", f"{CASE}/fixed@float32"}
    yml.write_text(DESCRIPTION_EDITS[edit](yml.read_text()))
    load_case(yml)  # still a valid case
    assert case_identity.content_hash(yml.parent) == before
    assert current_keys(root) == {f"{CASE}/repro@float32", f"{CASE}/fixed@float32"}


def test_the_rates_read_the_declaration_as_it_stands_now(tmp_path):
    root, yml = a_case(tmp_path)
    assert outside_compile(load_case(yml)) is None
    yml.write_text(DESCRIPTION_EDITS["declared documented"](yml.read_text()))
    assert outside_compile(load_case(yml)).startswith("documented behaviour")


@pytest.mark.parametrize("edit", EXECUTED_EDITS, ids=list(EXECUTED_EDITS))
def test_editing_what_runs_or_how_it_is_judged_supersedes(tmp_path, edit):
    root, yml = a_case(tmp_path)
    before = case_identity.content_hash(yml.parent)
    yml.write_text(EXECUTED_EDITS[edit](yml.read_text()))
    load_case(yml)
    assert case_identity.content_hash(yml.parent) != before


def test_editing_a_script_supersedes(tmp_path):
    root, yml = a_case(tmp_path)
    before = case_identity.content_hash(yml.parent)
    (yml.parent / "repro.py").write_text((yml.parent / "repro.py").read_text() + "\n# another line\n")
    assert case_identity.content_hash(yml.parent) != before


def test_a_default_written_out_is_the_same_run(tmp_path):
    root, yml = a_case(tmp_path)
    before = case_identity.content_hash(yml.parent)
    yml.write_text(
        edited(
            lambda d: d.update(expect={**d["expect"], "fix": "passes"}, requires={**d["requires"], "world_size": 1})
        )(yml.read_text())
    )
    assert case_identity.content_hash(yml.parent) == before


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
    )


def test_old_records_get_their_versions_identity_as_a_re_record_would(tmp_path):
    """v1 recorded with the whole-folder hash; v2 retitles (its v1 records stay current); v3 changes the oracle (the
    v1 record is history, a v3 record current). rehash gives each record the hash a re-record of its version stores."""
    root, yml = a_case(tmp_path)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")

    def files():
        return [(str(p.relative_to(yml.parent)), p.read_bytes()) for p in yml.parent.rglob("*") if p.is_file()]

    v1_old, v1_identity = rehash.folder_digest(files()), case_identity.content_hash(yml.parent)
    yml.write_text(DESCRIPTION_EDITS["retitled"](yml.read_text()))
    git(root, "commit", "-qam", "v2: retitled")
    v2_old = rehash.folder_digest(files())
    Store(root / "results").merge(
        [
            record(case=CASE, torch="2.13.0+cpu", case_hash=v1_old, run_id="a"),
            record(case=CASE, torch="2.14.1+cpu", case_hash=v2_old, run_id="b"),
            record(case=CASE, torch="2.15.0+cpu", case_hash="fedcba9876543210", run_id="c"),
        ]
    )  # no committed version
    assert current_keys(root) == set()  # before: whole-folder hashes match nothing now

    counts = rehash.rehash(root)
    assert counts == {"rehashed": 2, "unknown": 1}
    hashes = {r.torch: r.case_hash for r in Store(root / "results").load().records}
    assert hashes == {"2.13.0+cpu": v1_identity, "2.14.1+cpu": v1_identity, "2.15.0+cpu": "fedcba9876543210"}
    assert v1_identity == case_identity.content_hash(yml.parent)  # what a re-record of the retitled case stores
    loaded = know_content(Store(root / "results").load(), corpus.discover(root / "cases"))
    assert sorted(releases(loaded, "cpu", "cases")) == ["2.13.0", "2.14.1"]
    assert rehash.rehash(root) == {"already an identity": 2, "unknown": 1}  # once is enough

    yml.write_text(EXECUTED_EDITS["oracle"](yml.read_text()))
    git(root, "commit", "-qam", "v3: another oracle")
    assert current_keys(root) == set()  # the oracle changed: the v1 records are history now


def test_committed_records_are_identities():
    """Every hashed record of the committed store holds a run identity, none a whole-folder digest of a version."""
    now = {d.name: case_identity.content_hash(d) for d in (ROOT / "cases").iterdir() if (d / "case.yaml").is_file()}
    current = [
        r
        for r in Store(ROOT / "results").load("cpu", "cases", outputs=False).records
        if r.case_hash and r.case_hash == now.get(r.case)
    ]
    assert len(current) > 1000
