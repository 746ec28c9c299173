"""A wrong-result repro that draws its inputs at random with no seed gives a verdict that can differ run to run.
`new-case --from` does not refuse such a script: it seeds it (each random module the script imports by name, right
after its last top-level import) and says so, so that the case's verdict is the same on every run."""

from __future__ import annotations

import ast
import io
import tempfile
import tokenize
from pathlib import Path

from reprokit.contrib.oracle_checks import first_unseeded_draw

# The call that seeds each module's generator, by the module's own name; the script's name for it fills in {name}.
SEED_CALLS = {"torch": "{name}.manual_seed(0)", "random": "{name}.seed(0)", "numpy": "{name}.random.seed(0)"}
MARK = "  # added by reprokit new-case: the script drew random data with no seed"


def seeded(text: str) -> tuple[str, list[str]]:
    """The script with a seed call for each random module it imports by name (`import torch`, `import numpy as np`)
    inserted after its last top-level import and before its first random draw, and the calls added; the text
    unchanged and no call where it already seeds, draws nothing at random, imports none of them, or cannot be
    seeded there (why_not_seeded says why)."""
    return _seeded(text)[:2]


def why_not_seeded(text: str) -> str | None:
    """Why a script that draws random data with no seed could not be seeded, or None."""
    return _seeded(text)[2]


def _seeded(text: str) -> tuple[str, list[str], str | None]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text, [], None
    draw = first_unseeded_draw(tree)
    if draw is None:
        return text, [], None
    calls, last = [], 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
        if isinstance(node, ast.Import):
            calls += [SEED_CALLS[a.name].format(name=a.asname or a.name) for a in node.names if a.name in SEED_CALLS]
    calls = list(dict.fromkeys(calls))
    if not calls:
        return text, [], None
    if draw <= last:
        return text, [], f"its first draw (line {draw}) comes before its last import (line {last}) ends"
    offset = _offset_after_line(text, last)
    if offset is None:
        return text, [], "its lines could not be read as Python's tokenizer reads them"
    new = text[:offset] + "".join(f"{call}{MARK}\n" for call in calls) + text[offset:]
    if not _lands_between(new, last, len(calls)):
        return text, [], f"no line between its last import (line {last}) and its first draw (line {draw}) takes a call"
    return new, calls, None


def _offset_after_line(text: str, line: int) -> int | None:
    """The offset in `text` where the line after `line` starts, as the tokenizer counts lines (the parser's lines:
    a form feed, U+2028, U+0085 or \\x1c-\\x1e end no line there, as str.splitlines would have it)."""
    reader = io.StringIO(text, newline="")  # lines as they are (LF, CRLF or CR), nothing translated
    lines: list[str] = []

    def readline() -> str:
        lines.append(reader.readline())
        return lines[-1]

    try:
        for token in tokenize.generate_tokens(readline):
            if token.start[0] > line:
                break
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(lines) <= line:
        return None
    return sum(len(piece) for piece in lines[:line])


def _lands_between(new: str, last: int, count: int) -> bool:
    """Whether the parser sees the added calls as the top-level statements of lines last+1..last+count, after every
    import (the first draw, below the last import, moved down with what follows)."""
    try:
        body = ast.parse(new).body
    except SyntaxError:
        return False
    added = [n for n in body if isinstance(n, ast.Expr) and last < n.lineno <= last + count]
    imports = [n.end_lineno or n.lineno for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return len(added) == count and max(imports, default=0) <= last


def seeded_copy(source: Path, text: str, log) -> tuple[Path, str] | None:
    """The seeded script, written under its own name in a new temporary folder (the caller removes it), and its text;
    None where nothing needs seeding or nothing can be (then `validate` refuses it, as before, and says why)."""
    new, calls, why = _seeded(text)
    if why:
        log(
            f"not seeded: {source.name} draws random data with no seed and {why}: seed it yourself (e.g. "
            f"torch.manual_seed(0) before the first draw)"
        )
    if not calls:
        return None
    copy = Path(tempfile.mkdtemp(prefix="reprokit-seeded-")) / source.name
    copy.write_text(new, encoding="utf-8")
    log(
        f"seeded: {source.name} draws random data with no seed, so a wrong-result verdict could differ run to run; "
        f"the case's repro.py calls {', '.join(calls)} after its imports"
    )
    return copy, new
