"""The runs that say nothing of an issue, and why, in one line: the script could not run, torch could not import its
own dependencies (an old release's `from pkg_resources import packaging` under a setuptools without pkg_resources,
a numpy it was not built for: "environment broken: not judged"), no CUDA, a script written for another release, torch's
own words calling it documented behaviour, or a run past its time limit where the issue reports no hang (the
machine's pace, not torch's behaviour). Pure: runs and the issue's text in, a reason or None out."""

from __future__ import annotations

import re

from reprokit.model.records import RunStatus
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.not_a_bug import UNKNOWN_NAME
from reprokit.tracker.judging.signature import Signature
from reprokit.tracker.judging.triage_standing import TriageRun, observed_line
from reprokit.tracker.text.traceback_text import FRAME, TRACEBACK, Frame

NO_CUDA = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available")
HANG_WORDS = re.compile(
    r"\b(hangs?|hung|stuck|forever|never (?:finishes|returns|ends)|deadlock|time[sd]? ?out)\b", re.I
)
# torch's own words when the failure is the behaviour it documents (it names what to use instead)
DOCUMENTED = (re.compile(r"This graph break is fundamental"), re.compile(r"\bmaybe_mark_dynamic\b"))

# torch failing to import a part of itself is torch's own bug (a circular import, a renamed module), not the environment
OWN_MODULE = re.compile(r"No module named '(?:torch|functorch)\b|cannot import name '\w+' from '(?:torch|functorch)\b")
IMPORT_FAILED = re.compile(r"^(?:\[rank\d+\]: ?)?(?:\w+\.)*(ModuleNotFoundError|ImportError): (.{1,300})")


def broken_import(log: str) -> str | None:
    """The import error a traceback of `log` ends with where the import that failed is torch's own (its innermost
    frame in torch's package), in one line; None where there is none (a script importing what is not installed is
    the script's own business)."""
    frames: list[Frame] = []
    for line in log.splitlines():
        if TRACEBACK.match(line):
            frames = []
        elif m := FRAME.match(line):
            frames.append(Frame(m.group("file"), int(m.group("line")), m.group("name")))
        elif (m := IMPORT_FAILED.match(line)) and frames:
            said = m.group(2).strip()
            if frames[-1].in_torch and not OWN_MODULE.search(said):
                return f"{m.group(1)}: {said}"
            frames = []
    return None


def reports_hang(issue: Issue) -> bool:
    """Whether the issue's text speaks of a hang or a timeout: only then is a run past its limit the failure."""
    return bool(HANG_WORDS.search("\n".join([issue.title, issue.body, *(c.body for c in issue.comments)])))


def ran_past(ran: TriageRun) -> bool:
    return ran.obs is not None and ran.obs.status == RunStatus.TIMEOUT


def _broken(ran: TriageRun) -> str | None:
    broken = broken_import(f"{ran.log}\n{ran.obs.stderr_tail}") if ran.obs is not None else None
    return (
        f"environment broken: not judged (torch {ran.release} cannot import its own dependencies here: {broken})"
        if broken
        else None
    )


def _past(ran: TriageRun, issue: Issue | None) -> str | None:
    if ran.obs is None or not ran_past(ran) or (issue is not None and reports_hang(issue)):
        return None
    return (
        f"not judged here: on torch {ran.release} the script ran past {ran.obs.seconds:.0f} s, and the issue "
        "reports no hang"
    )


def reference_unjudged(ref: TriageRun, issue: Issue) -> str | None:
    """Why the run on the release the issue is judged on gives no signature; None where it gives one."""
    if ref.obs is None or ref.obs.exit_code == 77:
        return (
            f"the script could not run on torch {ref.release}, the release the issue is judged on "
            f"({ref.why or observed_line(ref.obs)})"
        )
    if said := _broken(ref) or _past(ref, issue):
        return said
    if NO_CUDA.search(ref.obs.message or ""):
        return f"the script needs CUDA, which torch {ref.release} here lacks"
    text = f"{ref.log}\n{ref.obs.message or ''}"
    if name := next((m.group(0) for p in UNKNOWN_NAME if (m := p.search(text))), None):
        return (
            f"the script uses what torch {ref.release} does not have ({name}): it needs the release it was written for"
        )
    if m := next((m for p in DOCUMENTED if (m := p.search(ref.obs.message or ""))), None):
        return f"documented behaviour: torch {ref.release}'s own message says {m.group(0)!r} ({observed_line(ref.obs)})"
    return None


def later_unjudged(late: TriageRun, signature: Signature) -> str | None:
    """Why a later release's run cannot be compared with the signature (its environment is broken, or it ran past
    its limit where the signature is no hang); None where it can."""
    if signature.kind is sig.EXITS and signature.stage == RunStatus.TIMEOUT:
        return _broken(late)
    return _broken(late) or _past(late, None)
