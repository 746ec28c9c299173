"""A case script as a plain file to paste into a bug report: the corpus's REPRO_DEVICE / REPRO_DTYPE reads replaced by
the constants of the run (`getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))` becomes `torch.float32`), and
the docstring lines that tell how to set them dropped. The rest of the file is left byte for byte."""

from __future__ import annotations

import ast
import json
import re

from reprokit.contrib.script_code import REPRO_VARIABLES, code_strings, dotted, parse
from reprokit.model.schema import InputError


def _variable_read(node: ast.AST) -> str | None:
    """REPRO_X when node is os.environ.get("REPRO_X"[, d]), os.getenv("REPRO_X"[, d]) or os.environ["REPRO_X"]."""
    if isinstance(node, ast.Call) and dotted(node.func).split(".")[-2:] in (["environ", "get"], ["os", "getenv"]):
        first = node.args[0] if node.args else None
    elif isinstance(node, ast.Subscript) and dotted(node.value).endswith("environ"):
        first = node.slice
    else:
        return None
    if isinstance(first, ast.Constant) and first.value in REPRO_VARIABLES:
        return first.value
    return None


def _replacements(tree: ast.Module, values: dict[str, str]) -> list[tuple[ast.expr, str]]:
    """(node, source text that replaces it), outermost first: a dtype read inside getattr(torch, ...) takes the
    whole getattr call."""
    found: list[tuple[ast.expr, str]] = []
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) == 2
            and dotted(node.args[0]) == "torch"
            and _variable_read(node.args[1]) == "REPRO_DTYPE"
        ):
            found.append((node, f"torch.{values['REPRO_DTYPE']}"))
            inside.add(id(node.args[1]))
    for node in ast.walk(tree):
        name = _variable_read(node)
        if name and id(node) not in inside and isinstance(node, ast.expr):  # (a read is a call or a subscript)
            found.append((node, json.dumps(values[name])))
    return found


def _offsets(text: str) -> list[int]:
    starts, total = [], 0
    for line in text.splitlines(keepends=True):
        starts.append(total)
        total += len(line.encode("utf-8"))
    return starts


def standalone(text: str, device: str, dtype: str) -> str:
    """The script with the run's device and dtype written in; raises InputError when a read cannot be replaced."""
    tree = parse(text)
    if tree is None:
        raise InputError("repro.py does not parse: it cannot be made a standalone script")
    data, starts = text.encode("utf-8"), _offsets(text)
    spans: list[tuple[int, int, bytes]] = []
    for node, new in _replacements(tree, {"REPRO_DEVICE": device, "REPRO_DTYPE": dtype}):
        assert node.end_lineno is not None and node.end_col_offset is not None  # ast.parse sets every span
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        spans.append((begin, end, new.encode("utf-8")))
    for begin, end, replacement in sorted(spans, reverse=True):
        data = data[:begin] + replacement + data[end:]
    out = _without_unused_os(_without_variable_notes(data.decode("utf-8")))
    left = parse(out)
    if left is None or any(v in s for s in code_strings(left) for v in REPRO_VARIABLES):
        raise InputError(
            "repro.py reads REPRO_DEVICE / REPRO_DTYPE in a way that cannot be replaced by a constant "
            '(use os.environ.get("REPRO_DEVICE", "cpu"))'
        )
    return out


def _without_variable_notes(text: str) -> str:
    """The module docstring without what it says about the corpus's variables (they set nothing any more): a
    parenthesis naming one is cut, a line still naming one is dropped (unless it holds the quotes)."""
    tree = parse(text)
    doc = ast.get_docstring(tree, clean=False) if tree else None
    if tree is None or not doc or not any(v in doc for v in REPRO_VARIABLES):
        return text
    node = tree.body[0]
    assert node.end_lineno is not None  # ast.parse sets every span
    out = []
    for i, line in enumerate(text.splitlines(keepends=True)):
        if node.lineno - 1 <= i <= node.end_lineno - 1 and any(v in line for v in REPRO_VARIABLES):
            line = re.sub(r"[ \t]*\([^()]*REPRO_[A-Z]+[^()]*\)", "", line)
            if any(v in line for v in REPRO_VARIABLES) and '"""' not in line and "'''" not in line:
                continue
        out.append(line)
    return "".join(out)


def _without_unused_os(text: str) -> str:
    """Without its `import os` line when nothing else of the script uses os any more."""
    tree = parse(text)
    if tree is None or any(isinstance(n, ast.Name) and n.id == "os" for n in ast.walk(tree)):
        return text
    lines = text.splitlines(keepends=True)
    imports = [
        n.lineno
        for n in tree.body
        if isinstance(n, ast.Import)
        and [(a.name, a.asname) for a in n.names] == [("os", None)]
        and lines[n.lineno - 1].strip() == "import os"
    ]
    if not imports:
        return text
    out = lines[: imports[0] - 1] + lines[imports[0] :]
    if (
        imports[0] - 1 < len(out)
        and imports[0] >= 2
        and not out[imports[0] - 2].strip()
        and not out[imports[0] - 1].strip()
    ):
        del out[imports[0] - 1]  # no two blank lines left where the import was
    return "".join(out)
