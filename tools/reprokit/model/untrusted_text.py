"""Text a case controls (its output, its exception's name and message, the why built from them, its title), made safe
for each place we publish it: a Markdown table cell, JUnit XML, a fenced block of a pull request, a terminal or CI log
line, a page of the site. Bidirectional controls (U+202A-U+202E, U+2066-U+2069: a right-to-left override makes
`exe.txt` read as `txt.exe`) are shown as `\\u202e` everywhere; in a Markdown cell, brackets are literal, so a case's
text makes no image or link."""

from __future__ import annotations

import re
from typing import overload

_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")  # CSI, OSC, two-byte escapes
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # every C0/C1 control but tab and newline
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # outside XML 1.0's Char
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate: no UTF-8 encoder writes it (json.dumps does)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides, isolates


def bidi_escaped(text: str) -> str:
    """Bidirectional control characters shown as `\\u202e` (they reorder what a reader sees, never what is there)."""
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def bidi_safe(value: object) -> object:
    """A template value with its bidirectional controls shown (jinja's `finalize`: every `{{ }}` of the site);
    markup stays markup."""
    return type(value)(bidi_escaped(value)) if isinstance(value, str) else value


def plain(text: str | None) -> str:
    """No terminal escape sequences, no control characters (tab and newline kept), bidirectional controls shown."""
    return bidi_escaped(_CONTROL.sub("", _ANSI.sub("", text or "")))


def recordable(text: str | None) -> str:
    """Text fit for the store, the journal and any log: encodable (lone surrogates become U+FFFD) and plain."""
    return _SURROGATE.sub("\ufffd", plain(text))


@overload
def recordable_value(value: dict) -> dict: ...
@overload
def recordable_value(value: object) -> object: ...
def recordable_value(value: object) -> object:
    """`recordable` applied to every string inside a JSON value (a probe's report: message, chain, counters); a dict
    stays a dict."""
    if isinstance(value, str):
        return recordable(value)
    if isinstance(value, list):
        return [recordable_value(v) for v in value]
    if isinstance(value, dict):
        return {recordable(str(k)): recordable_value(v) for k, v in value.items()}
    return value


# A path on the recording machine that names where torch is installed (a nox venv, a torch environment of the cache):
# "/root/.cache/reprokit/envs/torch-2.10.0/lib/python3.11/site-packages/torch/x.py" -> ".../site-packages/torch/x.py"
_INSTALLED = re.compile(r"(?:/[^\s\"'`/:]+)+/(site-packages|dist-packages)/")
# an interpreter installed under a home folder (pyenv's /root/.pyenv/versions/3.11.7/include/python3.11)
_HOME_CUT = re.compile(r"(?:/root|/home/[^\s\"'`/:]+)/[^\s\"'`:]*$")  # such a path cut off by a tail's end
_HOME_PREFIX = re.compile(r"(?:/root|/home/[^\s\"'`/:]+)(?:/[^\s\"'`/:]+)*?/(lib|include|bin)(?=[/\s\"'`:]|$)")
# a folder of the temporary folder: the run's own (/tmp/reprokit-x1y2/inductor/...), a checkout or a carried site there,
# pyenv's build folder (/tmp/python-build.2026.../Python-3.11.7/Python/ceval.c): kept from the folder below it on
_TEMPORARY = re.compile(r"(?:(?<=-[IL])|(?<![\w.~/-]))/tmp/[^\s\"'`/:]+/")  # also a compiler's -I/tmp/..
# A temporary folder inside one already cut (the run's own folder holds a tmp/ of its own, where inductor keeps its
# per-user cache, e.g. .../tmp/torchinductor_nobody/): cut to the folder below it too.
_TEMPORARY_WITHIN = re.compile(r"\.\.\./tmp/[^\s\"'`/:]+/")


# Where a path of the recording machine starts: not inside a word, a URL, a path already cut or `contiguous()/view`;
# a compiler's -I/-L counts.
_STARTS = r"(?:(?<=-[IL])|(?<![\w.~/:)-]))"
_FOLDERS = r"(?:/[^\s\"'`/:]+)+/"
# A checkout of this repository (the recording machine's, a worktree, a copy carried into a run's folder):
# "/work/main/.dev43/cases/x/repro.py" -> ".../cases/x/repro.py", as "/tmp/fresh42/cases/x" is cut below.
_CHECKOUT = re.compile(_STARTS + _FOLDERS + r"(?=(?:cases|sweep|tools/reprokit)/)")
# A site folder carried onto the path ("/opt/ao-site/torchao/x.py") or a virtual environment's root
# ("/opt/torch/.venv/bin/python3"): kept from the folder below it, as site-packages is.
_SITE = re.compile(_STARTS + r"(?:/[^\s\"'`/:]+)*/(?:[^\s\"'`/:]*site|\.?venv)/")


def without_install_paths(text: str) -> str:
    """`text` without the recording machine's install prefix: torch's own files as `.../site-packages/torch/...`, as
    anyone's torch says them (a record holds what torch said, never where this machine keeps it); the checkout's
    and a carried site folder's root cut the same way (`.../cases/x/repro.py`, `.../torchao/x.py`)."""
    text = _HOME_PREFIX.sub(lambda m: f".../{m.group(1)}", _INSTALLED.sub(lambda m: f".../{m.group(1)}/", text))
    text = _TEMPORARY_WITHIN.sub(".../", _TEMPORARY.sub(".../", _HOME_CUT.sub("...", text)))
    return _SITE.sub(".../", _CHECKOUT.sub(".../", text))


# What a run's keeper says held (child/contain.py), word for word: a record's `contained` is these, comma-separated.
CONTAINED_FACT = re.compile(
    r"subreaper|pid namespace|mount namespace|private /dev/shm|uid \d{1,10}|ipc namespace"
    r"|network namespace \(loopback only\)|(memory|disk) budget \d{1,9} MiB|pids budget \d{1,9}"
    r"|over (memory|disk|pids) budget|landlock ABI \d{1,3}|bubblewrap \d{1,4}(\.\d{1,4}){0,3}|no bubblewrap"
    r"|bubblewrap failed|no nested user namespaces|seccomp filter|cache budget \d{1,9} MiB|over cache budget"
    r"|stopped by SIGSTOP|no sandbox for a root warm run|copy-out cut off|copy-out failed"
)


def contained_facts(items: list[str] | str | None) -> str | None:
    """Only the facts a keeper writes (CONTAINED_FACT), comma-separated: anything else (a link, an image, HTML,
    a control character in an imported record) is dropped, never shown."""
    if items is None:
        return None
    parts = items.split(", ") if isinstance(items, str) else items
    return ", ".join(h for h in parts if isinstance(h, str) and CONTAINED_FACT.fullmatch(h)) or None


def one_line(text: str | None) -> str:
    """One line of plain text that no CI runner reads as a command (GitHub's `::error ...`, `::add-mask::`)."""
    line = " ".join(plain(text).split())
    return line if not line.startswith("::") else ": " + line[1:]


def md_cell(text: str | None, width: int = 90) -> str:
    """A Markdown table cell: one line, cut at `width`; pipes, backticks, brackets (images, links) and HTML made
    literal."""
    line = one_line(text)
    line = line if len(line) <= width else line[: width - 1] + "…"
    for raw, safe in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("`", "\\`"),
        ("[", "\\["),
        ("]", "\\]"),
        ("<", "&lt;"),
        (">", "&gt;"),
    ):
        line = line.replace(raw, safe)
    return line


def identifier(text: str | None) -> str:
    """A (dotted) class name as it may appear in a code span: anything else in it was not a class name."""
    return re.sub(r"[^\w.]", "", text or "")


def xml_text(text: str | None) -> str:
    """Text that XML 1.0 can hold (escape sequences and NUL cannot appear in it, even escaped)."""
    return _NOT_XML.sub("", plain(text).replace("\r", ""))


def fenced(text: str | None, info: str = "") -> list[str]:
    """A Markdown code block that the text cannot close: a backtick fence longer than any backtick run in it."""
    body = plain(text)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, body, fence]
