"""An issue's failure signature, as our own run observes it: the failing stage, the exception's class and its
message's skeleton (numbers, addresses, paths and generated symbol names normalised), or the exit status of a script
that fails without raising; a script that finishes is "passes".

The signature is taken from the run on the release the issue reports, and every other release is compared with it.
The issue's text only confirms it, loosely: the exception's class name, or a distinctive line of the observed
message, appears anywhere in the body or the comments (code blocks, quotes, lists, prose; log prefixes such as
`[rank0]:` or glog's `E1202 12:00:00.123 ...]` stripped). Every function here is linear in its text's size."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from reprokit.model.records import RunStatus
from reprokit.run.execute import Observation
from reprokit.tracker.text.clipped import clipped
from reprokit.tracker.text.traceback_text import assertion_site, headline, last_frames, says_nothing
from reprokit.tracker.text.user_paths import as_user_sees


class SignatureKind(str, Enum):
    """What the run that gives the signature did: the one vocabulary of signature kinds, compared by member. The
    words a person reads are Signature.line's ("exits 0", "exits 1 without raising", the error), never the value."""

    RAISES = "raises"
    EXITS = "exits"
    PASSES = "passes"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


class Outcome(str, Enum):
    """How another release's run compares with the signature (compare; triage_judge.outcome reads NOW_RAISES in):
    the one vocabulary of outcomes, compared by member; the drafts say it in sentences of their own. No value is a
    SignatureKind's (a str enum compares equal to another type's member of the same word)."""

    SAME = "same"
    OTHER = "other"
    GOOD = "finishes"
    NOT_RUN = "not run"
    NOW_RAISES = "now raises"  # an issue that asks for an error (or a crash eager refuses): the fix it asked for

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


RAISES, EXITS, PASSES = SignatureKind
SAME, OTHER, GOOD, NOT_RUN, NOW_RAISES = Outcome
SAME_WORDS = 0.6  # of the signature's skeleton words that another run's skeleton must hold
MIN_DISTINCTIVE = 24  # characters: a message line shorter than this confirms nothing by itself
MIN_PRINTED = 12  # characters of a printed line that confirm a failure reported as values

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@-]+){2,}/?")
_SYMBOL = re.compile(r"\b([A-Za-z_]+?)_?\d+(?:_\d+)*\b")  # s0, buf3, tmp12, arg0_1, primals_2, L_x_
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
_QUOTED = re.compile(r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\"")
_WORD = re.compile(r"[a-z][a-z_]{2,}")
# Log prefixes a pasted log carries: torchrun's rank prefix, glog/c10 lines, a quote's `>`, list markers.
_PREFIX = re.compile(
    r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[rank\d+\]:\s*)?"
    r"(?:[IWEF]\d{4} \d\d:\d\d:\d\d[.\d]*\s+\d+\s+\S+:\d+\]\s*)?",
    re.M,
)


def skeleton(message: str | None) -> str:
    """The message's first line with what changes between runs and machines made neutral."""
    line = headline(message or "")[:400]
    line = _ADDRESS.sub("ADDR", line)
    line = _PATH.sub("PATH", line)
    line = _SYMBOL.sub(lambda m: m.group(1) + "N", line)
    line = _NUMBER.sub("N", line)
    return " ".join(line.split())


@dataclass(frozen=True)
class Signature:
    """What a run of the script did, reduced to what should stay the same while the bug is there."""

    kind: SignatureKind
    exception: str = ""  # the class's short name
    stage: str = ""  # dynamo | aot_autograd | inductor | export | distributed | runtime
    skeleton: str = ""
    exit_code: int | None = None
    script_line: int | None = None  # the script's innermost line in the traceback (`python repro.py`'s)
    tokens: tuple[str, ...] = ()  # distinctive parts of the whole message (tokens_of): what an issue may quote instead
    shown: str = ""  # the message's first line as the user sees it: the words a person reads (never matched)
    assertion: str = ""  # where torch's own assert failed, for a message that is empty (traceback_text.assertion_site)

    def line(self, limit: int = 240) -> str:
        """The signature in words, with torch's own message (the skeleton is for matching, never for reading)."""
        if self.kind is PASSES:
            return "exits 0"
        if self.kind is EXITS:
            return f"exits {self.exit_code} without raising"
        stage = f" (in {self.stage})" if self.stage else ""
        return self.error(limit - len(stage)) + stage

    def error(self, limit: int = 200) -> str:
        """RAISES: the exception's class and torch's own message, as `python repro.py` prints them (cut at a word)."""
        message = self.shown or self.skeleton
        return clipped(f"{self.exception}: {message}", limit) if message else self.exception

    def as_fields(self) -> dict:
        return {
            "kind": self.kind,
            "exception": self.exception,
            "stage": self.stage,
            "skeleton": self.skeleton,
            "exit_code": self.exit_code,
            "script_line": self.script_line,
        }


def script_line(log: str, script: str = "repro.py") -> int | None:
    """The innermost line of the script in the last traceback of a log as the user sees it."""
    lines = [f.line for f in last_frames(log) if f.file == script]
    return lines[-1] if lines else None


def of(obs: Observation, log: str = "") -> Signature:
    if obs.status == RunStatus.PASS:
        return Signature(PASSES, exit_code=0)
    if obs.exception:
        return Signature(
            RAISES,
            obs.exception.rsplit(".", 1)[-1],
            obs.stage or "",
            skeleton(obs.message),
            script_line=script_line(log),
            tokens=tokens_of(obs.message or "", log),
            shown=(shown := " ".join(headline(as_user_sees(obs.message or "")).split())[:400]),
            assertion=assertion_site(log) if says_nothing(shown) else "",
        )
    return Signature(EXITS, exit_code=obs.exit_code, stage=obs.status)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(_QUOTED.sub(" ", text.lower())))


def compare(signature: Signature, obs: Observation | None, log: str = "") -> Outcome:
    """SAME: the run fails as the signature says (the same class in the same stage, and most of its message's words
    or the same line of the script: a message torch reworded between releases); GOOD: it finishes; OTHER: it fails
    some other way."""
    if obs is None or obs.exit_code == 77:
        return NOT_RUN
    seen = of(obs, log)
    if seen.kind is PASSES:
        return GOOD
    if seen.kind != signature.kind or seen.exception != signature.exception:
        return OTHER
    if seen.kind is EXITS:
        return SAME if seen.exit_code == signature.exit_code else OTHER
    wanted = _words(signature.skeleton)
    held = len(wanted & _words(seen.skeleton))
    if not wanted or held >= SAME_WORDS * len(wanted):
        return SAME
    reworded = (
        signature.script_line is not None
        and seen.script_line == signature.script_line
        and seen.stage == signature.stage
    )
    return SAME if reworded else OTHER


def normalised_text(texts: list[str]) -> str:
    """The issue's texts as one string, log prefixes and quote/list markers stripped from every line, each line's
    numbers and paths normalised as in `skeleton` (one pass over each text)."""
    out = []
    for text in texts:
        for line in _PREFIX.sub("", text).splitlines():
            if line.strip():
                out.append(skeleton(line))
    return "\n".join(out)


def printed_in(stdout: str, texts: list[str], normal: str | None = None) -> str | None:
    """A line the script printed (numbers normalised, at least MIN_PRINTED characters) that the issue's text quotes:
    the script's own printed result confirms a failure that the issue reports as values."""
    normal = normalised_text(texts) if normal is None else normal
    for line in stdout.splitlines()[-50:]:
        printed = skeleton(line)
        if len(printed) >= MIN_PRINTED and printed in normal:
            return f"the issue's text quotes what the script printed ({line.strip()[:80]})"
    return None


_OPERATOR = re.compile(r"\b(?:aten|prims|torch\.ops\.\w+)\.\w{3,}(?:\.\w+)?")
_INNER = re.compile(r"([A-Z]\w*(?:Error|Exception|Failed|Unsupported)):")
_QUOTED_PHRASE = re.compile(r"'([^'\n]{20,160})'|\"([^\"\n]{20,160})\"")  # another error's text, quoted
_COMPILER_LINE = re.compile(r"\b(?:error|fatal error):\s*(.{12,160})")
_IDENTIFIER = re.compile(
    r"`([A-Za-z_][\w.]{5,80})`|'([A-Za-z_][\w.]{5,80})'|\b([a-z]+_[a-z0-9_]{4,}|_[a-z][a-z0-9_]{5,})\b"
)
# Words every torch.compile report has: a match on them confirms nothing.
_COMMON = {
    "torch.compile",
    "torch._dynamo",
    "torch._inductor",
    "fullgraph",
    "torch_compile",
    "dynamic_shapes",
    "requires_grad",
    "torch.float32",
    "torch.float16",
    "torch.bfloat16",
    "from_user_code",
    "user_code",
    "torch._dynamo.exc",
    "torch.utils",
    "__init__",
    "__call__",
    "forward",
    "backward",
    "_call_impl",
    "_wrapped_call_impl",
    "torch_logs",
    "torchdynamo_verbose",
    "dynamo_timed",
    "compile_fx",
    "call_function",
}
STAGE_WORDS = {
    "dynamo": re.compile(r"\bdynamo\b", re.I),
    "inductor": re.compile(r"\binductor\b", re.I),
    "aot_autograd": re.compile(r"\baot_?autograd\b|\baot_eager\b", re.I),
    "export": re.compile(r"\b(?:torch\.)?export\b"),
    "distributed": re.compile(r"\b(?:DDP|FSDP|DTensor)\b"),
}


def tokens_of(message: str, log: str = "", limit: int = 16) -> tuple[str, ...]:
    """The distinctive parts of a whole exception message (not only its first line) and of the log's end (where a
    compiler's errors follow hundreds of warnings): the compiler's own error lines (normalised as the skeleton is),
    operator names, and quoted or snake_case identifiers that are not words every torch.compile report has. Bounded:
    20,000 characters of each, at most `limit` tokens."""
    text, found = message[:20_000] + "\n" + log[-20_000:], []
    for m in _COMPILER_LINE.finditer(text):
        found.append(skeleton(m.group(1)))
    found += [m.group(0) for m in _OPERATOR.finditer(text)]
    found += [skeleton(m.group(1) or m.group(2)) for m in _QUOTED_PHRASE.finditer(text)]
    for m in _IDENTIFIER.finditer(text):
        word = next(g for g in m.groups() if g)
        if word.lower() not in _COMMON and not _SYMBOL.fullmatch(word) and not word.startswith(("torch.", "self.")):
            found.append(word)
    return tuple(dict.fromkeys(t for t in found if len(t) >= 6))[:limit]


def confirmed_in(
    signature: Signature, texts: list[str], normal: str | None = None, outside_script: list[str] | None = None
) -> str | None:
    """How the issue's text confirms the observed signature (a phrase for the standing), or None. Loose, as a
    maintainer reads: the observed message quoted, the exception's class named, a distinctive token of the whole
    message (a compiler's own error line, an operator, an identifier) or the failing stage named. Tokens and stage
    are looked for outside the script (`outside_script`: the texts with the reproducer taken out), since the script
    names its own identifiers."""
    if signature.kind is not RAISES:
        return None
    joined = "\n".join(texts)
    name = signature.exception
    distinctive = signature.skeleton if len(signature.skeleton) >= MIN_DISTINCTIVE else ""
    normal = normalised_text(texts) if normal is None else normal
    if distinctive and distinctive[:60] in normal:  # the first sixty characters: a quoted message is often cut
        return "the issue's text quotes the observed message"
    inner = _INNER.match(signature.skeleton)  # a wrapper's headline names the error inside (CppCompileError: ...)
    for said in (name, inner.group(1) if inner else ""):
        if said and re.search(rf"(?<![\w]){re.escape(said)}\b", joined):
            return f"the issue's text names {said}"
    prose = "\n".join(texts if outside_script is None else outside_script)
    prose_normal = normalised_text([prose])
    for token in signature.tokens:
        if token in prose or token in prose_normal:
            return f"the issue's text names {token[:80]!r}, from the observed message"
    if (words := STAGE_WORDS.get(signature.stage)) and words.search(prose):
        return f"the issue's text names the failing stage ({signature.stage})"
    return None
