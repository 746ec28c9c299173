"""What a new PyTorch issue needs besides its body: a title naming the symptom, the labels a maintainer would apply
(from the component that fails and the case's area), the duplicate search keyed on torch's own exception text, and
the link to PyTorch's torch.compile issue form (labels from non-members are dropped, so the form is the way in)."""

from __future__ import annotations

import re
import shlex
import urllib.parse
from dataclasses import dataclass

from reprokit.model.records import RunStatus
from reprokit.run.execute import Observation
from reprokit.tracker.text.traceback_text import headline

FORM_URL = "https://github.com/pytorch/pytorch/issues/new?template=pt2-bug-report.yml"
# The backend of the ablation ladder that fails first names the component (PyTorch's troubleshooting page).
COMPONENT_OF_BACKEND = {"eager": "dynamo", "aot_eager": "aot_autograd", "inductor": "inductor"}
STAGE_LABELS = {
    "dynamo": "module: dynamo",
    "aot_autograd": "module: aotdispatch",
    "inductor": "module: inductor",
    "export": "oncall: export",
    "distributed": "oncall: distributed",
}
AREA_LABELS = {
    "ddp": ["oncall: distributed", "module: ddp"],
    "fsdp": ["oncall: distributed", "module: fsdp"],
    "dtensor": ["oncall: distributed", "module: dtensor"],
    "dynamic-shape": ["module: dynamic shapes"],
    "custom-op": ["module: custom-operators"],
    "autocast": ["module: amp (automated mixed precision)"],
    "amp": ["module: amp (automated mixed precision)"],
    "export": ["oncall: export"],
    "inductor-cpu": ["oncall: cpu inductor"],
    "fake-tensor": ["module: fakeTensor"],
    "guards-recompile": ["module: guards"],
    "graph-break": ["module: graph breaks"],
}


@dataclass(frozen=True)
class Failure:
    """What the plain run showed, in the words a report uses."""

    obs: Observation
    own_check: bool  # the failure is the script's own check (an assertion, no torch frame): a wrong result
    component: str  # dynamo | aot_autograd | inductor | export | distributed | runtime
    compiles: bool
    exports: bool

    @property
    def headline(self) -> str:
        return headline(self.obs.message)

    @property
    def short_exception(self) -> str:
        return (self.obs.exception or f"exit status {self.obs.exit_code}").rsplit(".", 1)[-1]


def component(stage: str | None, ladder: dict[str, Observation] | None) -> str:
    """The first ablation backend that fails names the component; without an ablation, the traceback's stage."""
    for backend, obs in (ladder or {}).items():
        if obs.status != RunStatus.PASS:
            return COMPONENT_OF_BACKEND[backend]
    return stage or "runtime"


def title(failure: Failure) -> str:
    """`torch.compile (inductor): AssertionError: expected size ...`, cut at 160 characters."""
    api = "torch.compile" if failure.compiles else "torch.export" if failures_export(failure) else "torch"
    where = f"{api} ({failure.component})" if failure.component != "runtime" else api
    said = failure.headline.split("; ")[0]
    op = re.search(r"(?:aten|torch\.ops\.\w+)\.\w+", failure.obs.message or "")
    if op and op.group(0) not in said:
        said += f" in {op.group(0)}"
    if failure.own_check and failure.compiles:
        text = f"{where} gives a different result than eager: {said}"
    else:
        text = f"{where}: {failure.short_exception}: {said}"
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:159].rstrip() + "…"


def failures_export(failure: Failure) -> bool:
    return failure.exports and not failure.compiles


def labels(failure: Failure, area: str | None, category: str) -> list[str]:
    """Suggested labels; the form adds `oncall: pt2` itself."""
    found = [STAGE_LABELS[failure.component]] if failure.component in STAGE_LABELS else []
    if failure.own_check:
        found.append("module: correctness (silent)")
    for label in AREA_LABELS.get(area or category, []):
        if label not in found:
            found.append(label)
    return found


def search_key(failure: Failure, script_calls: list[str]) -> str:
    """Words to search existing issues for: torch's own exception text (its stable words and the ops it names);
    for a wrong result (no torch text), the component and the torch functions the script calls."""
    if failure.own_check:
        return " ".join([failure.component, "accuracy", *script_calls[:3]])
    message = failure.obs.message or ""
    ops = re.findall(r"(?:aten|torch\.ops\.\w+)\.(\w+)", message)
    words = [w for w in re.split(r"[\s,;:()\[\]{}'\"`=<>]+", failure.headline) if w and not re.search(r"\d", w)]
    return " ".join(dict.fromkeys([failure.short_exception, *words[:12], *ops[:2]]))


def search_command(key: str) -> str:
    return shlex.join(["gh", "search", "issues", "--repo", "pytorch/pytorch", "--", key])


def form_link(issue_title: str) -> str:
    """The pt2 issue form with the title filled in (the form's fields have no ids to fill: paste each section)."""
    return f"{FORM_URL}&{urllib.parse.urlencode({'title': issue_title})}"
