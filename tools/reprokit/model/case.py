"""A repro case: cases/<id>/case.yaml, validated into one frozen `Case`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import regex
from pydantic import Field, StringConstraints, ValidationError, model_validator

from reprokit.model.choices import AREAS
from reprokit.model.schema import (
    ISSUE_URL,
    CaseId,
    Category,
    DeviceKind,
    DType,
    InputError,
    OneLine,
    Strict,
    Token,
    Url,
    describe_error,
    read_yaml,
)

Stance = Literal["fails", "works", "measures"]


# Where a case comes from: a claim of the article, the model sweep, or a public pytorch/pytorch issue.
Source = Literal["article", "sweep", "upstream"]


Area = Literal[AREAS]  # type: ignore[valid-type]


IssueState = Literal["open", "closed", "unknown"]  # unknown: not read from the issue page yet


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
    min_devices: int = Field(default=1, ge=1)
    min_compute_capability: float | None = Field(default=None, ge=3.0, le=20.0)
    dtypes: list[DType] = ["float32"]
    world_size: int = Field(default=1, ge=1, le=64)
    launcher: Literal["python", "torchrun"] = "python"
    timeout: int = Field(default=600, ge=1, le=7200)
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
            try:  # the engine the runner matches with (run/outcome.py), so that what validates also runs
                regex.compile(self.match)
            except regex.error as err:
                raise ValueError(f"match is not a valid regex: {err}") from None
        return self


class Expect(Strict):
    repro: Oracle
    fix: Literal["passes"] = "passes"


class OutsideCompile(Strict):
    """Why a failure of this case, however it reproduces, is not torch.compile's: it never enters the compile rate."""

    # invalid-usage: an option or API torch does not have; missing-package: an optional package not installed;
    # article-code: the article's own code fails before (or without) anything torch.compile does; correct-behaviour:
    # torch's error is right (the program is wrong for the inputs it declares); feature-request: torch works as designed
    # and the failure asks for another design (a check made earlier, an API it does not have).
    kind: Literal["invalid-usage", "missing-package", "article-code", "correct-behaviour", "feature-request"]
    why: OneLine


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
    outside_compile: OutsideCompile | None = None  # its failure is not torch.compile's (the compile rate leaves it out)
    source: Source = "article"
    # For source: upstream, from the issue page: the torch version it reports, its state on `issue_checked`.
    reported_on: Version | Literal["unknown"] | None = None  # unknown: the issue names no version
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
                raise ValueError(
                    "source: upstream needs reported_on (the torch version the issue reports) and "
                    "issue_state (open|closed)"
                )
        return self

    def expect_for(self, target: str) -> Expect:
        return self.overrides.get(target, self.expect)


def load_case(path: Path) -> Case:
    data = read_yaml(path, aliases=False)
    try:
        case = Case.model_validate(data)
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None
    if case.id != path.parent.name:
        raise InputError(f"{path}: id: {case.id!r} must equal the folder name {path.parent.name!r}")
    return case
