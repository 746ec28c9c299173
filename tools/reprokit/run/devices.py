"""Place runs on a host's accelerators: which device ids a run may hand out, and which run gets which devices.

Each run sees only the devices it was given, through its family's visible-devices variable (CUDA_VISIBLE_DEVICES,
HIP_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES). Runs are balanced across devices, at most `per_device` at a time on
each; a run needing N devices takes N distinct ones; an exclusive run (a measurement: bandwidth, peak memory, P2P)
starts only on an idle machine, gets every device, and nothing else starts until it has finished.
The device count comes from the case interpreter (environment.collect, a child process): the runner never imports
torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reprokit.model.corpus import CaseRun
from reprokit.model.matrix import VISIBLE_VAR

LABEL = {"cuda": "GPU", "rocm": "GPU", "npu": "NPU"}


def host_devices(kind: str, count: int, env: Mapping[str, str]) -> tuple[str, ...]:
    """The device ids runs may use: what the runner's own visible-devices variable lists (the first `count`, as
    the runtime stops at the first invalid entry), else 0 .. count-1. Empty for the CPU."""
    if kind not in VISIBLE_VAR or count <= 0:
        return ()
    listed = [part.strip() for part in env.get(VISIBLE_VAR[kind], "").split(",") if part.strip()]
    if listed:
        return tuple(listed[:count])
    return tuple(str(i) for i in range(count))


def jobs_per_device(jobs: int, asked: int | None = None) -> int:
    """Runs at once on one device: as asked, else no cap beyond the jobs (balancing alone spreads them). A cap of
    jobs/devices would cost concurrency: a run on two devices takes room on both (simulated on the recorded H200
    run times: 186 s against 143 s for 12 jobs on 2 GPUs)."""
    return max(1, asked if asked is not None else jobs)


def visible_env(kind: str, ids: tuple[str, ...]) -> dict[str, str]:
    return {VISIBLE_VAR[kind]: ",".join(ids)} if ids and kind in VISIBLE_VAR else {}


def describe(kind: str, ids: tuple[str, ...], per_device: int) -> str:
    """One line for the run's log and header, e.g. '2 GPUs (0,1), at most 8 runs per GPU'."""
    if not ids:
        return ""
    label = LABEL.get(kind, "device")
    return f"{len(ids)} {label}{'s' if len(ids) > 1 else ''} ({','.join(ids)}), at most {per_device} runs per {label}"


@dataclass
class DeviceSlots:
    """Which devices are free: `per_device` slots on each of `ids`. Used by the scheduler's one dispatching thread."""

    ids: tuple[str, ...]
    per_device: int

    def __post_init__(self) -> None:
        self.used = dict.fromkeys(self.ids, 0)

    @property
    def idle(self) -> bool:
        return not any(self.used.values())

    def take(self, need: int, exclusive: bool = False) -> tuple[str, ...] | None:
        """Devices for one run, or None while they are busy: the `need` least loaded (lowest id first on a tie);
        with exclusive, every device once the machine is idle."""
        if exclusive:
            if not self.idle:
                return None
            for i in self.ids:
                self.used[i] = self.per_device
            return self.ids
        if need > len(self.ids):  # the plan skips such runs (corpus.skip_reason): reaching here is a bug
            raise ValueError(f"a run needs {need} devices, the host has {len(self.ids)}")
        free = sorted(
            (i for i in self.ids if self.used[i] < self.per_device), key=lambda i: (self.used[i], self.ids.index(i))
        )
        if len(free) < need:
            return None
        chosen = tuple(sorted(free[:need], key=self.ids.index))
        for i in chosen:
            self.used[i] += 1
        return chosen

    def give_back(self, ids: tuple[str, ...], exclusive: bool = False) -> None:
        for i in ids:
            self.used[i] = 0 if exclusive else self.used[i] - 1


def device_need(run: CaseRun) -> int:
    return max(run.case.requires.min_devices, run.case.requires.world_size)


def placement_order(runs: list[CaseRun]) -> list[CaseRun]:
    """Exclusive runs first (each alone, on the still idle machine), the rest in the given order."""
    return sorted(runs, key=lambda r: not r.case.requires.exclusive)


class Dispatcher:
    """Which queued run starts next, and on which devices: the first in order that fits, except that nothing
    overtakes an exclusive run (it waits for the machine to be idle) and nothing starts beside one."""

    def __init__(self, runs: list[CaseRun], jobs: int, slots: DeviceSlots | None):
        self.queue, self.jobs, self.slots = placement_order(runs), max(1, jobs), slots
        self.running = 0
        self.exclusive_running = False

    def next(self) -> tuple[CaseRun, tuple[str, ...]] | None:
        if self.running >= self.jobs or self.exclusive_running:
            return None
        for i, run in enumerate(self.queue):
            if run.case.requires.exclusive:
                if self.running:
                    return None
                ids = self.slots.take(0, exclusive=True) if self.slots else ()
                assert ids is not None  # nothing runs (above): every slot was given back, the machine is idle
                self.exclusive_running = True
            else:
                ids = self.slots.take(device_need(run)) if self.slots else ()
                if ids is None:
                    continue
            self.running += 1
            return self.queue.pop(i), ids
        return None

    def finished(self, run: CaseRun, ids: tuple[str, ...]) -> None:
        exclusive = run.case.requires.exclusive
        if self.slots is not None:
            self.slots.give_back(ids, exclusive)
        self.running -= 1
        self.exclusive_running = self.exclusive_running and not exclusive
