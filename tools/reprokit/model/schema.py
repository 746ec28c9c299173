"""The data models: a case (cases/<id>/case.yaml) and the hardware matrix (matrix.yaml).

Everything that reads YAML goes through `load_case` / `load_matrix`, so a bad field always surfaces as one
`InputError` line naming the file, the field and what is allowed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, model_validator

CATEGORIES = (
    "dynamic-shape", "custom-op", "dtensor", "fusion", "graph-partition", "type-inference",
    "memory-lifecycle", "backend-fallback", "ddp", "fsdp", "amp", "refactor", "compile-options",
    "diagnosis", "model-sweep",
)
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
DType = Literal["float32", "float64", "bfloat16", "float16", "float8_e4m3fn"]
DeviceKind = Literal["cpu", "cuda", "rocm", "npu"]
Family = Literal["cpu", "cuda", "rocm", "ascend"]

# Values that end up in Dockerfiles and shell lines: one token, no whitespace, no shell metacharacters.
Token = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$", max_length=200)]
CaseId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*[a-z0-9]$", max_length=80)]
Url = Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$")]
ISSUE_URL = re.compile(r"^https://github\.com/pytorch/pytorch/issues/\d+$")
# A package index that reaches a Dockerfile's RUN line: an https URL made only of characters no shell interprets.
IndexUrl = Annotated[str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/%+-]*)?$",
                                            max_length=300)]
# Text that reaches a Dockerfile LABEL "...": one line without quotes, backslashes or shell expansions.
LabelText = Annotated[str, StringConstraints(pattern=r'^[^\n\r"\\$`]+$', max_length=200)]
OneLine = Annotated[str, StringConstraints(pattern=r"^[^\n\r]*$", min_length=1)]
PythonVersion = Annotated[str, StringConstraints(pattern=r"^3\.[0-9]{1,2}$")]  # X.Y, e.g. 3.12


def conforms(kind: object, value: str) -> bool:
    """Whether value passes one of the constrained string types above (Token, CaseId, ...)."""
    try:
        TypeAdapter(kind).validate_python(value)
        return True
    except ValidationError:
        return False


class InputError(Exception):
    """Bad input from a user-edited file: printed as one line, never as a traceback."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- cases

Stance = Literal["fails", "works", "measures"]
# Where a case comes from: a claim of the article, the model sweep, or a public pytorch/pytorch issue.
Source = Literal["article", "sweep", "upstream"]
# The subsystem an upstream issue is about (finer than category, which the reports group by).
AREAS = (
    "graph-break", "guards-recompile", "dynamic-shape", "custom-op", "fake-tensor", "aot-autograd", "inductor-cpu",
    "inductor-cuda", "export", "ddp", "fsdp", "dtensor", "autocast", "hang",
)
Area = Literal[AREAS]  # type: ignore[valid-type]
IssueState = Literal["open", "closed"]
Version = Annotated[str, StringConstraints(pattern=r"^\d+\.\d+(\.\d+)?([.+-]?[A-Za-z0-9.+]*)?$", max_length=40)]


class ArticleRef(Strict):
    section: OneLine  # e.g. "1" or "2.3"
    claim: OneLine
    # Required, no default (a default once inverted a verdict): what the article says about the code the repro runs.
    # "fails": the article says it fails (the repro reproducing confirms the claim);
    # "works": the article offers it as working (the repro failing refutes the claim);
    # "measures": the article states a figure; the repro fails when the measured value is outside `bound`.
    stance: Stance
    bound: OneLine | None = None  # for stance measures: which measured values agree with the article's figure
    no_fix: OneLine | None = None  # for stance measures without fixed.py: why no fix applies

    @model_validator(mode="after")
    def _bound_for_measures(self) -> ArticleRef:
        if (self.stance == "measures") != (self.bound is not None):
            raise ValueError("bound is required with stance: measures, and only there")
        if self.no_fix is not None and self.stance != "measures":
            raise ValueError("no_fix is only for stance: measures")
        return self


class Requires(Strict):
    devices: list[DeviceKind] = ["cpu", "cuda", "rocm", "npu"]
    min_devices: int = Field(1, ge=1)
    min_compute_capability: float | None = Field(None, ge=3.0, le=20.0)
    dtypes: list[DType] = ["float32"]
    world_size: int = Field(1, ge=1, le=64)
    launcher: Literal["python", "torchrun"] = "python"
    timeout: int = Field(600, ge=1, le=7200)
    torch: str | None = None  # a PEP 440 specifier, e.g. ">=2.6": older releases lack an API the case uses
    # The case measures the machine (bandwidth, peak memory, P2P): it runs alone, with every device of the host.
    exclusive: bool = False

    @model_validator(mode="after")
    def _torchrun_for_ranks(self) -> Requires:
        if self.world_size > 1 and self.launcher != "torchrun":
            raise ValueError("world_size > 1 needs launcher: torchrun")
        if self.torch is not None:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet

            try:
                SpecifierSet(self.torch)
            except InvalidSpecifier:
                raise ValueError(f"torch: {self.torch!r} is not a version specifier (e.g. '>=2.6')") from None
        return self


class Oracle(Strict):
    """What 'the bug reproduces' means for a repro script."""

    kind: Literal["raises", "wrong-result", "hangs", "nonzero-exit", "stdout", "stderr"]
    exception: str | None = None  # dotted or bare class name, for kind=raises
    match: str | None = None  # regex on the exception message (raises) or on the output (stdout/stderr)

    @model_validator(mode="after")
    def _check(self) -> Oracle:
        if self.exception is not None:
            if self.kind != "raises":
                raise ValueError("exception is only allowed with kind: raises")
            if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", self.exception):
                raise ValueError(f"exception {self.exception!r} is not a (dotted) class name")
        if self.kind in ("stdout", "stderr") and not self.match:
            raise ValueError(f"kind: {self.kind} needs a match regex")
        if self.match is not None:
            try:
                re.compile(self.match)
            except re.error as err:
                raise ValueError(f"match is not a valid regex: {err}") from None
        return self


class Expect(Strict):
    repro: Oracle
    fix: Literal["passes"] = "passes"


class Case(Strict):
    id: CaseId
    title: OneLine
    category: Category
    article: ArticleRef | None = None  # where the article makes the claim; None for cases from elsewhere
    requires: Requires = Requires()
    expect: Expect
    overrides: dict[Token, Expect] = {}  # per-target replacement of `expect`
    links: list[Url] = []
    notes: str | None = None
    documented: OneLine | None = None  # where PyTorch documents this behaviour (URL or sentence): not a bug to file
    source: Source = "article"
    # For source: upstream, from the issue page: the torch version it reports, its state on `issue_checked`.
    reported_on: Version | None = None
    issue_state: IssueState | None = None
    issue_checked: OneLine | None = None  # the date the issue state was read, e.g. "2026-11-30"
    area: Area | None = None

    @model_validator(mode="after")
    def _upstream_facts(self) -> Case:
        if self.source == "upstream":
            if self.article is not None:
                raise ValueError("source: upstream cases have no article block (they test an issue, not a claim)")
            if not any(ISSUE_URL.match(link) for link in self.links):
                raise ValueError("source: upstream needs a link to its pytorch/pytorch issue")
            if self.reported_on is None or self.issue_state is None:
                raise ValueError("source: upstream needs reported_on (the torch version the issue reports) and "
                                 "issue_state (open|closed)")
        return self

    def expect_for(self, target: str) -> Expect:
        return self.overrides.get(target, self.expect)


# ---------------------------------------------------------------- matrix

class DeviceMatch(Strict):
    """How a target's hardware is recognised on the machine that runs it."""

    kind: DeviceKind
    name_pattern: str | None = None  # regex on torch.cuda.get_device_name()
    compute_capability: float | None = None  # CUDA major.minor, exact
    gfx_arch: Token | None = None  # ROCm gcnArchName prefix, e.g. gfx942


class TorchPins(Strict):
    torch: Token
    torch_npu: Token | None = None
    # Where torch comes from, alone (pip --index-url): its own dependencies too, Triton included (each torch wheel
    # pins the Triton build it was made with, so none is pinned here); None = PyPI. Everything else comes from PyPI.
    index_url: IndexUrl | None = None
    # Releases run for the target's history (`nox -s history-<target>`), each in its own environment from the
    # registry; the pin above is what `repro-<target>` runs and the expected state gates.
    history: list[Token] = []
    extras: list[Token] = []  # the target's extra pinned packages (e.g. torchao for FP8 training on Hopper)


class Target(Strict):
    family: Family
    description: LabelText
    device: DeviceMatch
    base_image: Token
    pins: TorchPins
    python: PythonVersion = "3.11"  # the Python of the base image: the image's venv is made with python<X.Y>
    dtypes: list[DType]
    device_count: int = Field(1, ge=1)
    runner_labels: list[Token]
    fp8: bool = False  # the article's FP8 mixed-precision configuration


class Matrix(Strict):
    targets: dict[CaseId, Target]


# ---------------------------------------------------------------- claims ledger

class SweepMeasure(Strict):
    """A claimed failure rate that the model sweep measures: the claim holds where the measured rate reaches it."""

    measure: Literal["structures-failing", "fp8-cells-failing"]
    claimed: float = Field(ge=0, le=1)


class Hardware(Strict):
    """A claim about specific hardware: judged only on the targets that are that hardware (rule 4)."""

    needs: OneLine  # the hardware the claim is about, e.g. "A100 PCIe", "H100 SXM", "2-socket NUMA host"
    # target -> what its runs are recorded on when that is a substitute ("H200 (Hopper, sm_90) for H100 SXM");
    # the empty string: the target is the claimed hardware itself. Every other target is "not testable here".
    targets: dict[Token, str]


class Claim(Strict):
    id: CaseId
    section: OneLine
    claim: OneLine
    cases: list[CaseId] = []
    sweep: SweepMeasure | None = None
    untestable: OneLine | None = None
    # Rule 1: what the claim covers that its cases do not test (another mode, other shapes, many steps, ...);
    # the verdict is then "partly tested" with this, never a plain confirmed / refuted.
    untested: OneLine | None = None
    hardware: Hardware | None = None
    # Rule 7: the claim is about the article's own fix: judged on the cases' article_fix runs, never on fixed.py.
    article_fix: bool = False

    @model_validator(mode="after")
    def _one_of(self) -> Claim:
        if bool(self.cases or self.sweep) == bool(self.untestable):
            raise ValueError("give cases and/or sweep, or untestable (the reason nothing can test the claim)")
        if self.article_fix and (self.sweep or not self.cases):
            raise ValueError("article_fix: true needs cases (with article_fix.py) and no sweep")
        return self


class Claims(Strict):
    claims: list[Claim]


# ---------------------------------------------------------------- loading

def describe_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"]
    if first["type"] == "literal_error":
        msg = f"must be {first['ctx']['expected']} (got {first['input']!r})"
    elif first["type"] == "extra_forbidden":
        msg = "is not a known field"
    elif first["type"] == "missing":
        msg = "is required" + (" (fails, works or measures: what the article says about this code)"
                               if where.endswith("article.stance") else "")
    elif first["type"] == "string_pattern_mismatch":
        msg = f"{first['input']!r} is not allowed (must match {first['ctx']['pattern']})"
    return _short(f"{where}: {msg}", 300)


MAX_YAML_BYTES = 1 << 20  # matrix.yaml and claims.yaml are tens of KB; a case.yaml a few


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader without anchors and aliases: a few hundred bytes of nested aliases expand to gigabytes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", self.peek_event().start_mark)
        return super().compose_node(parent, index)


def _short(text: object, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def read_yaml(path: Path, aliases: bool = True) -> object:
    """The YAML document at path (at most MAX_YAML_BYTES); aliases=False for contributors' case.yaml files."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    if len(raw) > MAX_YAML_BYTES:
        raise InputError(f"{path}: larger than {MAX_YAML_BYTES} bytes")
    try:
        return yaml.load(raw.decode("utf-8", "replace"), Loader=yaml.SafeLoader if aliases else _NoAliasLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}:{line} is not valid YAML ({_short(getattr(err, 'problem', err))})") from None


def load_case(path: Path) -> Case:
    data = read_yaml(path, aliases=False)
    try:
        case = Case.model_validate(data)
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None
    if case.id != path.parent.name:
        raise InputError(f"{path}: id: {case.id!r} must equal the folder name {path.parent.name!r}")
    return case


def load_matrix(path: Path) -> Matrix:
    try:
        return Matrix.model_validate(read_yaml(path))
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None


def load_claims(path: Path, case_ids: set[str]) -> Claims:
    try:
        claims = Claims.model_validate(read_yaml(path))
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None
    for i, claim in enumerate(claims.claims):
        missing = [c for c in claim.cases if c not in case_ids]
        if missing:
            raise InputError(f"{path}: claims.{i}.cases: no case folder {missing[0]!r} (see `reprokit list`)")
    return claims
