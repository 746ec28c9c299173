"""The typed outputs: one `Record` per run, one `RunHeader` per run of the runner (environment and how it ran).

Typed with the same system as the inputs (pydantic): an unknown or malformed field is refused with one line naming
the file, the line and the field. A record's identity is `RecordKey` (target, suite, torch, device, case, variant,
dtype): the results store keeps one record per identity.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Literal, NamedTuple

from pydantic import BaseModel, Field, StringConstraints, ValidationError, field_validator

from reprokit.model.schema import InputError, Strict, describe_error
from reprokit.model.untrusted_text import without_install_paths
from reprokit.model.verdict import Verdict

# The parts of a record that name files in the store (results/<target>/<suite>/<torch>.jsonl, journals by run id):
# identifiers, never a path (an imported record with target "../x" must not write outside the store).
TARGET_PATTERN = r"^[a-z0-9][a-z0-9-]{0,78}[a-z0-9]$"
TORCH_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,79}$"
RUN_ID_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z._-]{0,99}$"
SUITES = ("cases", "sweep")
TargetName = Annotated[str, StringConstraints(pattern=TARGET_PATTERN)]
TorchBuild = Annotated[str, StringConstraints(pattern=TORCH_PATTERN)]
RunId = Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN)]
Suite = Literal["cases", "sweep"]


def store_path_problem(target: str, suite: str, torch: str) -> str | None:
    """Why these cannot name a file of the store (None when they can): each must be an identifier."""
    if not re.fullmatch(TARGET_PATTERN, target):
        return f"target {target!r} is not a target name (lower-case letters, digits and '-')"
    if suite not in SUITES:
        return f"suite {suite!r} is not one of {', '.join(SUITES)}"
    if not re.fullmatch(TORCH_PATTERN, torch):
        return f"torch {torch!r} is not a torch build (letters, digits, '.', '+', '-', '_')"
    return None


class RunStatus(str, Enum):
    """How one run's process ended, as the runner saw it (run/execute.py decides it; the keeper and the probes in
    child/ never write it): the one definition every comparison on the runner's side uses. A record keeps the value,
    so the stored lines read "pass" as before."""

    PASS = "pass"
    FAIL = "fail"
    CRASH = "crash"  # a signal, a stopped sandbox, or an observation the case tampered with
    TIMEOUT = "timeout"
    OOM = "oom"  # the script raised MemoryError or torch's OutOfMemoryError
    OVER_BUDGET = "over-budget"  # the keeper's memory, disk, cache or pids budget stopped it

    # The member is its value as a str, in f-strings too (a why line says "expected a hang, got fail"); Python 3.11
    # would otherwise format a (str, Enum) member as "RunStatus.FAIL".
    __str__ = str.__str__
    # str.__format__ takes format_spec positional-only, Enum declares it by name: the same call at runtime
    __format__ = str.__format__  # type: ignore[assignment]


class Stage(str, Enum):
    """The part of torch a failure came from: what the probe reads from the exception chain's tracebacks
    (child/stages.py, in the case's process: its words are these values), or the ablation ladder's first failing
    backend (run/outcome.ladder_stage). A record keeps the value."""

    DYNAMO = "dynamo"
    AOT_AUTOGRAD = "aot_autograd"
    INDUCTOR = "inductor"
    EXPORT = "export"
    DISTRIBUTED = "distributed"
    RUNTIME = "runtime"  # none of torch's compile stack: the case's own code, an eager error

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    @classmethod
    def read(cls, said: object) -> Stage | None:
        """A probe report's stage (written in the case's process, so any text): the member it names, else None."""
        return next((stage for stage in cls if stage.value == said), None)


def message_headline(message: str | None, wrapper: Literal["skip", "join"] = "skip") -> str:
    """An exception message's first line. A backend wrapper's first line ("backend='inductor' raised:") says nothing
    of the error it wraps: "skip" drops every such line (a report's cell shows the error itself), "join" keeps the
    first with the line after it (triage's signature and an upstream issue's text: the error as torch printed it,
    the wrapper named). A wrapper line with nothing after it is shown: there is nothing better."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    if wrapper == "join":
        return " ".join(lines[:2]) if len(lines) > 1 and lines[0].endswith("raised:") else "".join(lines[:1])
    while len(lines) > 1 and lines[0].endswith("raised:"):
        lines.pop(0)
    return lines[0] if lines else ""


class RecordKey(NamedTuple):
    target: str
    suite: str
    torch: str
    device: str
    case: str
    variant: str
    dtype: str


class Record(Strict):
    # identity
    target: TargetName
    suite: Suite = "cases"
    torch: TorchBuild  # with its build, e.g. 2.13.0+cpu
    device: str  # the device the run used: "cpu" or the accelerator's name
    case: str
    variant: str
    dtype: str
    # verdict
    verdict: Verdict
    why: str
    # what the run did (all None for a skipped run)
    status: RunStatus | None = None
    exit_code: int | None = None
    signal: str | None = None
    exception: str | None = None
    message: str | None = None
    stage: Stage | None = None
    ladder: dict[str, RunStatus] | None = (
        None  # backend -> status, for failures whose stage the traceback does not tell
    )
    dynamo: dict | None = None
    seconds: float = 0.0
    stderr_tail: str = ""
    stdout_tail: str = ""
    output_bytes: dict[str, int] = Field(default_factory=dict)
    confined: int | None = None  # the Landlock ABI that kept the run's writes in its own folder; None: not confined
    # what kept the run's processes in and away from the runner (contain.py), e.g. "subreaper, pid namespace,
    # private /dev/shm, uid 65534"; None: recorded before containment was recorded
    contained: str | None = None
    # provenance
    run_id: str  # the RunHeader this record came from
    recorded_at: str  # ISO 8601, UTC
    reprokit: str  # the harness version that recorded it
    # the run's identity (case_identity.content_hash: the scripts, the oracle, requires and limits, never the description);
    # None: recorded before hashes were kept
    case_hash: str | None = None
    # Runs of this variant and how many failed as claimed (repro) or broke (fix), when it ran more than once
    # (`--repeat N`, or a changed verdict re-run): {"runs": N, "failed": k}. Left out of the store when None.
    repeats: dict[str, int] | None = None
    # A run that hit its time limit with other runs in flight is run again alone with a longer limit before a hang,
    # a timeout or a broken fix is recorded; this says so, and what the first run saw. Left out when None.
    confirmed_alone: str | None = None
    # The verdicts that records of this identity and case content had on other machines (CPU model, GPU), which this
    # record replaced in the store: {machine: verdict}. Where one differs from this record's verdict, the verdict is
    # machine-dependent (store/machines.py). Left out when None.
    on_other_machines: dict[str, str] | None = None

    @field_validator("message", "stderr_tail", "stdout_tail")
    @classmethod
    def _no_install_prefix(cls, text: str | None) -> str | None:
        """What torch printed, as anyone's torch prints it: no venv or cache path of the recording machine."""
        return without_install_paths(text) if isinstance(text, str) else text

    @field_validator("dynamo")
    @classmethod
    def _no_install_paths(cls, dynamo: dict | None) -> dict | None:
        """Graph-break reasons as torch says them anywhere: no venv or cache path of the recording machine."""
        if not dynamo or not isinstance(dynamo.get("graph_break_reasons"), list):
            return dynamo
        reasons = [without_install_paths(r) if isinstance(r, str) else r for r in dynamo["graph_break_reasons"]]
        return {**dynamo, "graph_break_reasons": reasons}

    @property
    def key(self) -> str:
        """The run's name within one target and torch: case/variant@dtype."""
        return f"{self.case}/{self.variant}@{self.dtype}"

    @property
    def identity(self) -> RecordKey:
        return RecordKey(self.target, self.suite, self.torch, self.device, self.case, self.variant, self.dtype)

    @property
    def machine_dependent(self) -> bool:
        """Another machine gave this identity and content another verdict: like a flaky verdict, never a change, a
        fix or a figure of a rate."""
        return any(verdict != str(self.verdict) for verdict in (self.on_other_machines or {}).values())

    def headline(self) -> str:
        """The message's first informative line (a backend wrapper's "backend='inductor' raised:" is skipped)."""
        return message_headline(self.message)


class Sitting(Strict):
    """One stretch of a run: a run cut off (deadline, interrupt, kill) and continued with --resume has several."""

    jobs: int
    started: str
    finished: str | None = None
    wall_seconds: float = 0.0
    on: str = ""  # the machine, in words (environment.summary)
    ended: str = "finished"  # finished | deadline | interrupted | killed
    env_setup_seconds: float = 0.0  # building the torch environment (--torch), when this sitting had to
    devices: list[str] = []  # the accelerator ids runs were placed on (each run saw only its own); [] on the CPU
    jobs_per_device: int | None = None  # at most this many runs at once on one device


class RunHeader(Strict):
    run_id: RunId
    target: TargetName
    suite: Suite = "cases"
    torch: TorchBuild
    device: str
    environment: dict  # environment.collect(): torch, CUDA, device facts and collect_env
    mode: str = "host"  # host | container
    cache: str = "cold"  # cold | warm (DIR)
    interpreter: str = "cold"  # cold | warm (forked from a zygote)
    selection: list[str] = []  # --case globs; empty: the whole suite
    shard: str | None = None
    smoke: bool = False
    planned: int = 0  # runs in the plan of the first sitting
    not_started: int = 0  # runs of the plan not recorded yet (deadline, interrupt); --resume runs them
    sittings: list[Sitting] = []
    reprokit: str

    @property
    def wall_seconds(self) -> float:
        return round(sum(s.wall_seconds for s in self.sittings), 1)

    @property
    def finished(self) -> str:
        return (self.sittings[-1].finished or self.sittings[-1].started) if self.sittings else "?"


def parse_record(line: str, where: str) -> Record:
    try:
        return Record.model_validate_json(line)
    except ValidationError as err:
        raise InputError(f"{where}: {describe_error(err)}") from None


def parse_header(line: str, where: str) -> RunHeader:
    try:
        return RunHeader.model_validate_json(line)
    except ValidationError as err:
        raise InputError(f"{where}: {describe_error(err)}") from None


def dump(model: BaseModel) -> str:
    """One line of JSON with sorted keys: what the store writes, so that a pull request's diff is one line a record."""
    import json

    return json.dumps(stored_fields(model), sort_keys=True, ensure_ascii=False)


def stored_fields(model: BaseModel) -> dict:
    """The fields the store keeps of a model: a record's `repeats` only when it ran more than once, its
    `confirmed_alone` only when it was, `on_other_machines` only when another machine's record was replaced (the lines
    of every record before them stay as they were)."""
    data = model.model_dump(mode="json")
    for optional in ("repeats", "confirmed_alone", "on_other_machines"):
        if data.get(optional, 0) is None:
            del data[optional]
    return data
