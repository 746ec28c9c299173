"""The article's claims: claims.yaml, the ledger's input, validated into one frozen `Claims`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from reprokit.model.schema import CaseId, InputError, OneLine, Strict, Token, describe_error, read_yaml


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


class Figure(Strict):
    """A figure the article states that the claim's repro prints and the ledger judges beside the case's own verdict:
    a printed value outside [low, high] disagrees with the article (the claim is then "mixed" where the rest agrees)."""

    name: OneLine  # e.g. "DDP/single peak memory"
    printed: OneLine  # a regex whose first group is the measured value in the repro's stdout
    claimed: float  # the article's figure
    low: float | None = None  # the measured values that agree with it: low <= value <= high
    high: float | None = None

    @model_validator(mode="after")
    def _bounded(self) -> Figure:
        if self.low is None and self.high is None:
            raise ValueError("a figure needs low and/or high (which measured values agree with the article)")
        try:
            if re.compile(self.printed).groups < 1:
                raise ValueError("printed needs a group that captures the measured value")
        except re.error as err:
            raise ValueError(f"printed is not a valid regex: {err}") from None
        return self

    def agrees(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    @property
    def bound(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{self.low:g} - {self.high:g}"
        return f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"


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
    # The claim is about what torch.compile does to a graph: a run decides it only where its record shows a graph
    # compiled (dynamo unique_graphs >= 1); without one the claim is not tested there.
    compiles_graph: bool = False
    # Figures the article states that the repro prints, judged beside the case's own verdict (ledger.py).
    figures: list[Figure] = []

    @model_validator(mode="after")
    def _one_of(self) -> Claim:
        if bool(self.cases or self.sweep) == bool(self.untestable):
            raise ValueError("give cases and/or sweep, or untestable (the reason nothing can test the claim)")
        if self.article_fix and (self.sweep or not self.cases):
            raise ValueError("article_fix: true needs cases (with article_fix.py) and no sweep")
        return self


class Claims(Strict):
    claims: list[Claim]


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
