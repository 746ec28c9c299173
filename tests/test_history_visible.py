"""History visible: where a target's only records of a case are history (a two-GPU run recorded before records kept a
run identity, no two GPUs since), the case page says when and on what it last ran and why that is not current, never
that the case has not run there."""

import shutil
from pathlib import Path

from reprokit.model import case_identity
from reprokit.model.records import RunHeader, Sitting
from reprokit.publish import render
from reprokit.publish.site import website
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import history_rows
from support import record

ROOT = Path(__file__).resolve().parents[1]
TWO_GPUS = "fsdp-shard-compile-order"  # world_size 2
ONE_GPU = "custom-op-unregistered-gemm"


def header(run_id: str, devices: int, when: str) -> RunHeader:
    return RunHeader(
        run_id=run_id,
        target="h100",
        torch="2.11.0+cu130",
        device="NVIDIA H200",
        reprokit="test",
        environment={"torch": "2.11.0+cu130", "device_count": devices, "device_name": "NVIDIA H200"},
        sittings=[Sitting(jobs=1, started=when, finished=when)],
    )


def test_a_case_whose_records_are_all_history_says_when_and_where_it_last_ran(tmp_path):
    root = tmp_path / "repo"
    for case in (TWO_GPUS, ONE_GPU):
        shutil.copytree(ROOT / "cases" / case, root / "cases" / case)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    store = Store(root / "results")
    on_h100 = dict(target="h100", torch="2.11.0+cu130", device="NVIDIA H200")
    store.merge(
        [
            record(
                case=TWO_GPUS,
                verdict="does-not-reproduce",
                run_id="two",
                recorded_at="2026-11-29T09:13:00Z",
                case_hash=None,
            ).model_copy(update=on_h100)
        ],
        [header("two", 2, "2026-11-29T09:13:00Z")],
    )
    store.merge(
        [
            record(
                case=ONE_GPU,
                run_id="one",
                recorded_at="2026-12-01T00:06:29Z",
                stage="dynamo",
                case_hash=case_identity.content_hash(root / "cases" / ONE_GPU),
            ).model_copy(update=on_h100)
        ],
        [header("one", 1, "2026-12-01T00:06:29Z")],
    )
    loaded = Store(root / "results").load()
    published = render.gather(root, load_root_matrix(root), loaded)
    assert list(published.last_runs["h100"]) == [TWO_GPUS]
    page = website.pages(
        published, history_rows(loaded, [], None), website.from_git(ROOT), current=website.current_identities(loaded)
    )[f"cases/{TWO_GPUS}.html"]
    row = page[page.index('<tr data-target="h100"') :]
    row = row[: row.index("</tr>")]
    assert "has not run" not in row
    assert "last ran on torch 2.11.0+cu130 on 2 × NVIDIA H200 (2026-11-29), does-not-reproduce" in row
    assert (
        "recorded before records kept the run&#39;s identity" in row or "recorded before records kept the run's" in row
    )
    assert "2 devices have not been available to this project on h100 since 2026-11-29: its 1 later run had 1" in row
