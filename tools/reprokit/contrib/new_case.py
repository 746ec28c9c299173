"""Scaffold a case folder, or turn a standalone repro script (as posted in an issue) into a case."""

from __future__ import annotations

import ast
import datetime
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from reprokit.contrib.script_code import facts
from reprokit.model.case import load_case
from reprokit.model.schema import CATEGORIES, ISSUE_URL, CaseId, InputError, conforms
from reprokit.run import execute

REPRO_TEMPLATE = '''"""{title}

Run: python repro.py   (REPRO_DEVICE=cuda REPRO_DTYPE=bfloat16 to change device / dtype)
Exit 0 when torch behaves correctly; raise (or exit non-zero) when the bug shows.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.nn.functional.gelu(x) * 2  # TODO: the pattern that fails


x = torch.randn(8, 8, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x))  # check against eager
print("compiled result matches eager")
'''

FIXED_TEMPLATE = '''"""The fix for {id}: the same computation written so that it works, checked against eager."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.nn.functional.gelu(x) * 2  # TODO: the fixed pattern


x = torch.randn(8, 8, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x))
print("fixed variant matches eager")
'''

YAML_HEADER = """# A repro case. Fields (validated by tools/reprokit/model/case.py; `reprokit validate` checks them):
#   id        the folder name: lowercase words joined by '-'
#   title     one line: what the repro does
#   category  one of: {categories}
#   article   optional: {{section, claim, stance: fails|works|measures}} when the case tests a claim of the article
#   requires  devices (cpu/cuda/rocm/npu), min_devices, min_compute_capability, dtypes, world_size,
#             launcher (python|torchrun), timeout (seconds)
#   expect    repro: what "the bug reproduces" means. kind: raises (exception: dotted or bare class name,
#             match: regex on the message) | wrong-result (an assertion failed) | hangs (runs past the timeout)
#             | nonzero-exit | stdout / stderr (match: regex on the output)
#   overrides per-target replacement of expect, e.g. {{h100: {{repro: {{kind: nonzero-exit}}}}}}
#   links     upstream issues (https URLs)
#   documented optional: where PyTorch documents this behaviour (URL or sentence); `reprokit upstream` refuses it
#   source    article | sweep | upstream (a public pytorch/pytorch issue: then reported_on, issue_state,
#             issue_checked and area say what the issue page says)
"""


def oracle_from_flags(raises: str | None, match: str | None, stdout: str | None, stderr: str | None,
                      hang: bool, wrong_result: bool = False) -> dict | None:
    """The oracle the flags give; None when no flag gives one (new-case then proposes one from a run)."""
    chosen = [flag for flag, on in (("--raises", raises), ("--stdout", stdout), ("--stderr", stderr),
                                    ("--hang", hang), ("--wrong-result", wrong_result)) if on]
    if len(chosen) > 1:
        raise InputError(f"{' and '.join(chosen)}: give one oracle (what 'the bug reproduces' means)")
    if raises:
        return {"kind": "raises", "exception": raises, **({"match": match} if match else {})}
    if match:  # any exception class whose message matches (the class differs across releases)
        return {"kind": "raises", "match": match}
    if stdout:
        return {"kind": "stdout", "match": stdout}
    if stderr:
        return {"kind": "stderr", "match": stderr}
    if hang:
        return {"kind": "hangs"}
    if wrong_result:
        return {"kind": "wrong-result"}
    return None


@dataclass(frozen=True)
class Observed:
    """One plain run of a script from an issue: how it ended and the oracle that ending suggests."""

    exit_code: int | None  # None: it ran past the timeout
    exception: str | None  # the class named on the last traceback's exception line, as Python printed it
    message: str
    oracle: dict | None  # None: nothing failed here, so nothing to propose

    def summary(self) -> str:
        if self.exit_code is None:
            return "it ran past the timeout here (a hang?)"
        if self.exit_code == 0:
            return "it exits 0 here: the bug does not reproduce on this torch (give the oracle the issue reports)"
        if self.exit_code == 77:
            return f"it skips itself here (exit 77): {self.message}"
        if self.exception:
            return f"it raises {self.exception}: {self.message[:120]}"
        return f"it exits {self.exit_code} without a traceback"


def exception_line(stderr: str) -> tuple[str | None, str]:
    """The exception class and message of the last traceback in stderr (chained tracebacks: the one raised last)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None, ""
    for line in lines[starts[-1] + 1:]:
        if line and not line.startswith((" ", "\t")):
            m = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", line)
            return (m.group(1), (m.group(2) or "").strip()) if m else (None, line)
    return None, ""


def message_regex(message: str) -> str | None:
    """A stable prefix of an error message as a regex: cut before numbers, quotes and brackets (they vary by run)."""
    prefix = re.split(r"[0-9'\"(\[<{]", message, maxsplit=1)[0][:60].strip().rstrip(":,;.")
    return re.escape(prefix) if len(prefix) >= 8 else None


def observe(script: Path, timeout: float) -> Observed:
    """Run the script once as an issue's reader would (plain python, CPU), contained as `reprokit run` contains a case
    (the script is code from an issue: no secret of this shell reaches it), and propose the oracle its failure fits."""
    with tempfile.TemporaryDirectory(prefix="reprokit-new-case-") as tmp:
        copy = Path(tmp) / script.name
        shutil.copyfile(script, copy)
        Path(tmp).chmod(0o755)
        copy.chmod(0o644)
        seen = execute.observe(copy, env=dict(os.environ), timeout=timeout,
                         extra_env={"REPRO_DEVICE": os.environ.get("REPRO_DEVICE", "cpu")})
    if seen.status == "timeout":
        return Observed(None, None, "", {"kind": "hangs"})
    exception = (seen.exception or "").removeprefix("__main__.") or None
    message = next((ln.strip() for ln in (seen.message or "").splitlines() if ln.strip()), "")
    if seen.exit_code in (0, 77):
        last = (seen.stdout_tail.strip().splitlines() or [""])[-1]
        return Observed(seen.exit_code, None, last, None)
    if exception is None:
        return Observed(seen.exit_code, None, "", {"kind": "nonzero-exit"})
    if exception.rsplit(".", 1)[-1] == "AssertionError":
        return Observed(seen.exit_code, exception, message, {"kind": "wrong-result"})
    regex = message_regex(message)
    return Observed(seen.exit_code, exception, message,
                    {"kind": "raises", "exception": exception, **({"match": regex} if regex else {})})


def infer_requires(text: str) -> dict:
    """Devices, launcher, ranks and dtypes as the script's code uses them (script_code.py: its syntax tree, so a
    comment or a docstring saying "cuda" changes nothing): REPRO_DEVICE means any device, a hard-coded "cuda"
    device or a .cuda() call means CUDA, a torchrun program gets launcher and world_size."""
    return facts(text).requires()


def docstring_title(text: str) -> str | None:
    """The first line of the script's module docstring (an issue's title, as the contributor pasted it)."""
    try:
        doc = ast.get_docstring(ast.parse(text))
    except SyntaxError:
        return None
    line = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
    return line or None


@dataclass(frozen=True)
class Provenance:
    """Where an upstream case comes from, from the issue page (all optional for article cases)."""

    source: str | None = None  # article | sweep | upstream; None: upstream when a link is a pytorch issue
    reported_on: str | None = None
    issue_state: str | None = None
    area: str | None = None
    requires_torch: str | None = None
    notes: str | None = None
    devices: tuple[str, ...] = ()  # overrides what infer_requires reads from the script

    def fields(self, links: list[str]) -> dict:
        source = self.source or ("upstream" if any(ISSUE_URL.match(link) for link in links) else None)
        out: dict = {}
        if self.notes:
            out["notes"] = self.notes
        if source:
            out["source"] = source
        if source == "upstream":
            missing = [flag for flag, v in (("--reported-on", self.reported_on), ("--issue-state", self.issue_state))
                       if not v]
            if missing:
                raise InputError(f"{' and '.join(missing)}: an upstream case says what its issue page says "
                                 "(the torch version it reports, open|closed)")
        for key, value in (("reported_on", self.reported_on), ("issue_state", self.issue_state),
                           ("area", self.area)):
            if value:
                out[key] = value
        if self.issue_state:
            out["issue_checked"] = datetime.date.today().isoformat()
        return out


def create(cases_dir: Path, case_id: str, *, source: Path | None, title: str | None, category: str,
           links: list[str], oracle: dict | None, timeout: int | None, fixed: Path | None = None,
           provenance: Provenance = Provenance(), observe_run: bool = True, log=print) -> Path:
    """Make cases/ID. With --from and no oracle flag, the script runs once and its failure proposes the oracle."""
    if not conforms(CaseId, case_id):
        raise InputError(f"ID {case_id!r}: lowercase letters, digits and '-' only, e.g. dynamic-shape-my-bug")
    folder = cases_dir / case_id
    if folder.exists():
        raise InputError(f"{folder}: already exists; pick another ID or edit that case")
    for flag, path in (("--from", source), ("--fixed", fixed)):
        if path is not None and not path.is_file():
            raise InputError(f"{flag} {path}: no such file")
    text = source.read_text(encoding="utf-8") if source else ""
    extra = provenance.fields(links)
    title = title or (docstring_title(text) if source else None) or (
        f"Repro from {source.name}" if source else f"TODO: describe {case_id}")
    requires = infer_requires(text) if source else {"devices": ["cpu", "cuda"]}
    if provenance.devices:
        requires["devices"] = list(provenance.devices)
    if provenance.requires_torch:
        requires["torch"] = provenance.requires_torch
    if timeout:
        requires["timeout"] = timeout
    if source is not None and observe_run and requires.get("devices") != ["cuda"]:
        seen = observe(source.resolve(), timeout or 300)
        log(f"ran {source.name} once: {seen.summary()}")
        if oracle is None and seen.oracle is not None:
            oracle = seen.oracle
            log(f"oracle from that run: {oracle}")
        elif oracle is not None and seen.oracle is not None and oracle != seen.oracle:
            log(f"note: your oracle {oracle} differs from what this run suggests: {seen.oracle}")
    oracle = oracle or {"kind": "nonzero-exit"}
    data = {"id": case_id, "title": title, "category": category, "requires": requires,
            "expect": {"repro": oracle}, "links": links, **extra}
    folder.mkdir(parents=True)
    try:
        text = YAML_HEADER.format(categories=", ".join(CATEGORIES)) + yaml.safe_dump(data, sort_keys=False, width=120)
        (folder / "case.yaml").write_text(text, encoding="utf-8")
        if source is not None:
            shutil.copyfile(source, folder / "repro.py")  # unchanged, byte for byte
            if fixed is not None:
                shutil.copyfile(fixed, folder / "fixed.py")
        else:
            (folder / "repro.py").write_text(REPRO_TEMPLATE.format(title=title), encoding="utf-8")
            (folder / "fixed.py").write_text(FIXED_TEMPLATE.format(id=case_id), encoding="utf-8")
        load_case(folder / "case.yaml")
    except InputError:
        shutil.rmtree(folder)
        raise
    return folder
