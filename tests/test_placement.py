"""Runs placed on accelerators: which ids a run may use, balancing, jobs per device, runs needing several devices,
exclusive runs; then the real scheduler running real child processes that report the devices they were given."""

import json
from pathlib import Path

import pytest
from reprokit.model import corpus
from reprokit.model.matrix import load_matrix
from reprokit.run import devices
from reprokit.run.devices import DeviceSlots, Dispatcher
from reprokit.run.scheduler import Identity, RunOptions, longest_first, run_all

ROOT = Path(__file__).resolve().parents[1]
MATRIX = load_matrix(ROOT / "matrix.yaml")


def test_device_ids_come_from_the_runners_own_visible_devices_else_the_count():
    assert devices.host_devices("cuda", 2, {}) == ("0", "1")
    assert devices.host_devices("cuda", 2, {"CUDA_VISIBLE_DEVICES": "2,3"}) == ("2", "3")
    assert devices.host_devices("cuda", 1, {"CUDA_VISIBLE_DEVICES": "GPU-aa,GPU-bb"}) == ("GPU-aa",)
    assert devices.host_devices("rocm", 2, {"CUDA_VISIBLE_DEVICES": "5", "HIP_VISIBLE_DEVICES": "4,6"}) == ("4", "6")
    assert devices.host_devices("npu", 3, {"ASCEND_RT_VISIBLE_DEVICES": "1,2,3"}) == ("1", "2", "3")
    assert devices.host_devices("cuda", 0, {}) == () and devices.host_devices("cpu", 4, {}) == ()


def test_each_family_pins_a_run_with_its_own_variable():
    assert devices.visible_env("cuda", ("1",)) == {"CUDA_VISIBLE_DEVICES": "1"}
    assert devices.visible_env("rocm", ("0", "1")) == {"HIP_VISIBLE_DEVICES": "0,1"}
    assert devices.visible_env("npu", ("3",)) == {"ASCEND_RT_VISIBLE_DEVICES": "3"}
    assert devices.visible_env("cpu", ()) == {} and devices.visible_env("cuda", ()) == {}


def test_by_default_no_device_caps_the_jobs():
    """12 unpinned jobs on 2 H200s was the recorded run: by default the same jobs run, balanced, none waiting."""
    assert devices.jobs_per_device(12) == 12 and devices.jobs_per_device(16, asked=3) == 3
    assert devices.jobs_per_device(16, asked=0) == 1


def test_balancing_alone_keeps_two_device_runs_from_costing_jobs(tmp_path):
    """Four runs on two devices each and eight on one, 8 jobs on 2 GPUs: with the default every job runs; a cap of
    jobs/devices (4 per GPU) would leave jobs idle while the two-device runs hold room on both GPUs."""
    spec = {
        **{f"pair-{i}": "{devices: [cuda], min_devices: 2}" for i in range(4)},
        **{f"single-{i}": "{devices: [cuda]}" for i in range(8)},
    }
    runs = _runs(tmp_path, spec)

    def started(per_device):
        dispatch = Dispatcher(runs, jobs=8, slots=DeviceSlots(("0", "1"), per_device))
        return sum(1 for _ in iter(dispatch.next, None))

    assert started(devices.jobs_per_device(8)) == 8
    assert started(4) == 4  # the four pairs fill both GPUs' four slots


def test_slots_balance_runs_across_devices_and_cap_each_device():
    slots = DeviceSlots(("0", "1"), per_device=2)
    assert [slots.take(1) for _ in range(4)] == [("0",), ("1",), ("0",), ("1",)]
    assert slots.take(1) is None
    slots.give_back(("1",))
    assert slots.take(1) == ("1",)


def test_a_run_needing_two_devices_waits_for_two_with_room():
    slots = DeviceSlots(("0", "1", "2"), per_device=1)
    assert slots.take(1) == ("0",) and slots.take(1) == ("1",)
    assert slots.take(2) is None  # one device free: not enough
    slots.give_back(("0",))
    assert slots.take(2) == ("0", "2")
    with pytest.raises(ValueError, match="needs 4 devices"):
        slots.take(4)


def test_an_exclusive_run_waits_for_an_idle_machine_and_takes_every_device():
    slots = DeviceSlots(("0", "1"), per_device=3)
    first = slots.take(1)
    assert slots.take(0, exclusive=True) is None
    slots.give_back(first)
    assert slots.take(0, exclusive=True) == ("0", "1")
    assert slots.take(1) is None
    slots.give_back(("0", "1"), exclusive=True)
    assert slots.idle and slots.take(1) == ("0",)


def _runs(tmp_path, spec):
    """CaseRuns of real cases: spec maps case id -> requires (YAML flow mapping)."""
    for cid, requires in spec.items():
        folder = tmp_path / "cases" / cid
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(
            f"id: {cid}\ntitle: placement fixture\ncategory: diagnosis\nrequires: {requires}\n"
            "expect:\n  repro: {kind: nonzero-exit}\n"
        )
        (folder / "repro.py").write_text(REPORTER)
    found = corpus.discover(tmp_path / "cases")
    return corpus.plan(
        found, "h100", MATRIX.targets["h100"], {"device_kind": "cuda", "device_count": 2, "compute_capability": 9.0}
    )


def test_the_dispatcher_puts_exclusive_runs_first_and_starts_nothing_beside_them(tmp_path):
    runs = _runs(
        tmp_path,
        {
            "a-one": "{devices: [cuda]}",
            "b-two": "{devices: [cuda], min_devices: 2}",
            "c-measures": "{devices: [cuda], min_devices: 2, exclusive: true}",
        },
    )
    dispatch = Dispatcher(runs, jobs=8, slots=DeviceSlots(("0", "1"), per_device=2))
    run, ids = dispatch.next()
    assert run.case.id == "c-measures" and ids == ("0", "1")
    assert dispatch.next() is None  # nothing beside an exclusive run
    dispatch.finished(run, ids)
    started = [dispatch.next() for _ in range(2)]
    assert [(r.case.id, i) for r, i in started] == [("a-one", ("0",)), ("b-two", ("0", "1"))]
    assert dispatch.next() is None  # the queue is empty


def test_the_dispatcher_never_exceeds_the_jobs(tmp_path):
    runs = _runs(tmp_path, {f"r-{i}": "{devices: [cuda]}" for i in range(6)})
    dispatch = Dispatcher(runs, jobs=3, slots=DeviceSlots(("0", "1"), per_device=8))
    placed = [dispatch.next() for _ in range(3)]
    assert dispatch.next() is None and [ids for _, ids in placed] == [("0",), ("1",), ("0",)]


def test_a_forced_run_without_the_accelerator_runs_what_a_cpu_can_and_skips_the_rest():
    found = {c.case.id: c for c in corpus.discover(ROOT / "cases")}
    facts = {"device_kind": "cpu", "device_count": 0, "torch": "2.13.0"}
    h100 = MATRIX.targets["h100"]
    runs = corpus.plan([found["custom-op-unregistered-gemm"], found["partition-p2p-access"]], "h100", h100, facts)
    reasons = {r.case.id: r.skip for r in runs}
    assert reasons == {"custom-op-unregistered-gemm": None, "partition-p2p-access": "needs 2 CUDA devices, found 0"}
    assert corpus.run_kind(h100, facts) == "cpu"
    assert corpus.run_kind(h100, {"device_kind": "cuda", "device_count": 1}) == "cuda"


def test_the_measuring_cases_are_exclusive():
    found = {c.case.id: c.case for c in corpus.discover(ROOT / "cases")}
    exclusive = {cid for cid, case in found.items() if case.requires.exclusive}
    assert exclusive == {"partition-numa-bandwidth", "partition-p2p-access", "fsdp-peak-memory-ratios"}


# Each run reports the devices it was given and when it ran (real child processes, through the real probe).
REPORTER = (
    "import json, os, time\nstart = time.time()\ntime.sleep(0.4)\n"
    "print('PLACED ' + json.dumps({'ids': os.environ['CUDA_VISIBLE_DEVICES'], 'start': start, "
    "'end': time.time(), 'device': os.environ['REPRO_DEVICE']}))\n"
)


@pytest.mark.e2e
def test_real_runs_see_only_their_devices_balanced_and_capped(tmp_path):
    spec = {
        **{f"single-{i}": "{devices: [cuda]}" for i in range(8)},
        "pair-0": "{devices: [cuda], min_devices: 2}",
        "pair-1": "{devices: [cuda], min_devices: 2}",
        "measure-0": "{devices: [cuda], min_devices: 2, exclusive: true}",
    }
    runs = _runs(tmp_path, spec)
    opts = RunOptions(device_kind="cuda", jobs=6, ladder=False, devices=("0", "1"), jobs_per_device=2)
    records = run_all(runs, Identity("h100", "cases", "t", "d", "r"), opts)
    seen = {}
    for rec in records:
        line = next(ln for ln in rec.stdout_tail.splitlines() if ln.startswith("PLACED "))
        seen[rec.case] = json.loads(line[len("PLACED ") :])
    assert len(seen) == len(spec) and {s["device"] for s in seen.values()} == {"cuda"}
    assert {cid: s["ids"] for cid, s in seen.items() if not cid.startswith("single")} == {
        "pair-0": "0,1",
        "pair-1": "0,1",
        "measure-0": "0,1",
    }
    singles = [s["ids"] for cid, s in seen.items() if cid.startswith("single")]
    assert sorted(singles) == ["0"] * 4 + ["1"] * 4  # balanced
    # At no moment more than 2 runs on one device; the exclusive run overlapped nothing.
    for device in ("0", "1"):
        spans = [(s["start"], s["end"]) for s in seen.values() if device in s["ids"].split(",")]
        for start, _ in spans:
            assert sum(1 for a, b in spans if a <= start < b) <= 2
    measure = seen.pop("measure-0")
    assert all(s["end"] <= measure["start"] or s["start"] >= measure["end"] for s in seen.values())


@pytest.mark.e2e
@pytest.mark.heavy
@pytest.mark.timeout(600)
def test_a_gpu_target_forced_onto_this_cpu_runs_what_a_cpu_can_and_ends_with_its_summary(tmp_path):
    """The smoke test of a GPU target where there is no GPU (as in the h100 image on a CPU machine): the GPU-only
    case is skipped with its reason, the CPU-capable one runs on the CPU, and nothing is gated."""
    from support import stored
    from test_cli import reprokit

    proc = reprokit(
        ROOT,
        "run",
        "--target",
        "h100",
        "--host",
        "--force",
        "--no-ladder",
        "--jobs",
        "2",
        "--case",
        "custom-op-unregistered-gemm",
        "--case",
        "partition-p2p-access",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = {r.key: r for r in stored(tmp_path, "h100")}
    assert records["partition-p2p-access/repro@float32"].why == "needs 2 CUDA devices, found 0"
    ran = records["custom-op-unregistered-gemm/repro@float32"]
    assert ran.device == "cpu" and ran.verdict == "reproduces" and ran.status == "fail"
    assert "no cuda device here (--force)" in proc.stdout
    tail = proc.stdout.splitlines()[-3:]
    assert tail[0].startswith(f"summary: h100: {len(records)} runs recorded in ")
    assert tail[0].endswith(": 1 reproduces, 1 fix-works, 1 fix-broken, 2 skipped")
    assert tail[1] == "  verdicts: not compared with the expected state"
    assert tail[2] == "  report: " + str(tmp_path / "reports" / "h100.md")


def test_longest_expected_runs_start_first_recorded_times_over_timeouts(tmp_path):
    runs = _runs(
        tmp_path,
        {
            "a-short": "{devices: [cuda], timeout: 60}",
            "b-long": "{devices: [cuda], timeout: 1200}",
            "c-default": "{devices: [cuda]}",
            "d-skipped": "{devices: [rocm], timeout: 7000}",
        },
    )
    assert [r.case.id for r in runs if r.skip] == ["d-skipped"]
    fresh = [r.case.id for r in longest_first(runs, {})]
    assert fresh == ["b-long", "c-default", "a-short", "d-skipped"]  # a fresh store: the declared timeouts decide
    short = next(r for r in runs if r.case.id == "a-short")
    recorded = [r.case.id for r in longest_first(runs, {short.key: 900.0})]
    assert recorded == ["a-short", "b-long", "c-default", "d-skipped"]  # a recorded time beats a timeout's share
