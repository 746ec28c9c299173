"""The body of a new PyTorch issue, field by field as PyTorch's torch.compile form (pt2-bug-report.yml) makes it:
"🐛 Describe the bug" (what fails and where, the releases it fails on, the standalone reproducer, the backend
ablation when the script compiles, the minified repro or why there is none, the tlparse attachments, the internal
stack the error asks for), "Error logs" (the plain run's stderr as `python repro.py` prints it) and "Versions"
(`python -m torch.utils.collect_env`). Pure: evidence in, Markdown out."""

from __future__ import annotations

from dataclasses import dataclass, field

from reprokit.model.records import RunStatus
from reprokit.run.execute import Observation
from reprokit.tracker.drafting.issue_fields import Failure
from reprokit.tracker.judging.not_a_bug import Screened
from reprokit.tracker.judging.upstream_runs import ABLATION, summary
from reprokit.tracker.text.bug_text import OWN_WORDS, code_span, fence
from reprokit.tracker.text.release_summary import ReleaseHistory

FORM_FIELDS = ("🐛 Describe the bug", "Error logs", "Versions")  # the form's textareas, in its order
# GitHub refuses an issue body over 65,536 characters: the logs are cut to their last lines within these
LOG_CHARS, VERBOSE_CHARS, STDOUT_CHARS = 20_000, 15_000, 4_000


def tail(text: str, limit: int) -> str:
    """The last `limit` characters of a log, from a line start, saying how much came before."""
    if len(text) <= limit:
        return text
    kept = text[-limit:].split("\n", 1)[-1]
    return f"[... {len(text) - len(kept)} earlier characters cut ...]\n{kept}"


@dataclass(frozen=True)
class Evidence:
    """Everything a report says, each piece from a run made now or from the results store."""

    failure: Failure
    script: str  # the standalone script, as run
    error_log: str  # the plain run's stderr without the runner's frames
    stdout: str
    device: str
    torch_version: str
    target: str
    history: ReleaseHistory
    ladder: dict[str, Observation] | None  # None: the script calls no torch.compile
    verbose_log: str | None  # the TORCHDYNAMO_VERBOSE=1 run's stderr, when the error asks for it
    minified: str | None
    minified_note: str  # why the minified repro is (not) there
    trace_note: str
    versions: str
    labels: list[str]
    overridden: Screened | None = None  # a screen that --force overrode
    expected: str = ""  # the expected behaviour, one line
    workaround: str | None = None  # fixed.py made standalone: what works instead
    related: list[str] = field(default_factory=list)  # Markdown lines: the search run and the issues / PRs it found


def _what_happened(ev: Evidence) -> str:
    f = ev.failure
    run = f"On torch {ev.torch_version} ({ev.device}), `python repro.py` (below)"
    if f.obs.status == RunStatus.TIMEOUT:
        return f"{run} was still running at its timeout and was killed (a hang)."
    if f.own_check and f.compiles:
        return (
            f"{run} fails its own comparison of the compiled result with eager: {code_span(f.headline[:300])}; "
            "torch raises nothing."
        )
    if f.obs.exception:
        where = f" in {f.component}" if f.component != "runtime" else ""
        return f"{run} raises {code_span(f.obs.exception)}{where}: {code_span(f.headline[:300])}."
    return f"{run} exits with status {f.obs.exit_code} ({f.obs.status})."


def _ablation(ev: Evidence) -> list[str]:
    if ev.ladder is None:
        return []
    failing = next((b for b in ABLATION if ev.ladder[b].status != RunStatus.PASS), None)
    said = (
        f"the first backend that fails is `{failing}`"
        if failing
        else "every backend passes once the script's `mode` / `options` are dropped, so those settings cause it"
    )
    return [
        "Ablation: the same script with the backend of every `torch.compile` call replaced (its `mode` and "
        f"`options` dropped); {said}.",
        "",
        "| backend | result |",
        "| --- | --- |",
        *[f"| `{b}` | {code_span(summary(ev.ladder[b]))} |" for b in ABLATION],
        "",
    ]


def _history(ev: Evidence) -> list[str]:
    per_error = ev.history.by_error()
    return [
        f"Releases: {ev.history.line()} (recorded runs of this script on target `{ev.target}`).",
        "",
        *([f"Per error: {code_span(per_error[:900])}.", ""] if per_error else []),
        "<details><summary>Every recorded release</summary>",
        "",
        *ev.history.table(),
        "",
        "</details>",
        "",
    ]


def _verbose(ev: Evidence) -> list[str]:
    if ev.verbose_log is None:
        return []
    return [
        "<details><summary>Internal stack (the same run with <code>TORCHDYNAMO_VERBOSE=1</code>, as the error "
        "asks)</summary>",
        "",
        fence(tail(ev.verbose_log, VERBOSE_CHARS)),
        "",
        "</details>",
        "",
    ]


def _change(ev: Evidence) -> list[str]:
    """The news first: where the error's class changed between releases, since when and from what."""
    if (changed := ev.history.error_change()) is None:
        return []
    first, before_span, before, now = changed
    return [
        f"Since torch {first} this raises {code_span(now)}; torch {before_span} raised {code_span(before)} "
        "for the same script.",
        "",
    ]


def describe(ev: Evidence) -> list[str]:
    lines = [
        OWN_WORDS,
        "",
        *_change(ev),
        _what_happened(ev),
        "",
        *([ev.expected, ""] if ev.expected else []),
        *_history(ev),
        "Minimal reproducer: save it as `repro.py` in an empty folder and run `python repro.py` (only torch "
        "installed).",
        "",
        fence(ev.script, "python"),
        "",
        *_ablation(ev),
    ]
    if ev.minified:
        lines += [
            "Minified repro (PyTorch's minifier, `TORCHDYNAMO_REPRO_AFTER`, from the script above):",
            "",
            fence(ev.minified, "python"),
            "",
        ]
    if ev.workaround:
        lines += [
            "Workaround: the same computation written this way works (`python fixed.py` exits 0):",
            "",
            fence(ev.workaround, "python"),
            "",
        ]
    lines += [ev.minified_note, "", ev.trace_note, "", *_verbose(ev), *ev.related]
    if ev.labels:
        lines += ["Suggested labels: " + ", ".join(f"`{label}`" for label in ev.labels), ""]
    if ev.overridden:
        lines += [
            f"Note: filed with `--force` over the {ev.overridden.screen} screen: "
            f"{code_span(ev.overridden.reason[:400])}",
            "",
        ]
    return lines


def render(ev: Evidence) -> str:
    """The issue body: one `### ` heading per field of the form, in its order."""
    log = tail(ev.error_log.rstrip(), LOG_CHARS) or "(nothing on stderr)"
    errors = [fence(log), ""]
    if ev.stdout.strip():
        errors += ["<details><summary>stdout</summary>", "", fence(tail(ev.stdout, STDOUT_CHARS)), "", "</details>", ""]
    body = {"🐛 Describe the bug": describe(ev), "Error logs": errors, "Versions": [fence(ev.versions), ""]}
    return "\n".join(line for field in FORM_FIELDS for line in [f"### {field}", "", *body[field]])
