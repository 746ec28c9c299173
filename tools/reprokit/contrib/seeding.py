"""A wrong-result repro that draws its inputs at random with no seed gives a verdict that can differ run to run.
`new-case --from` does not refuse such a script: it seeds it (each random module the script imports by name, right
after its last top-level import) and says so, so that the case's verdict is the same on every run."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

from reprokit.contrib.oracle_checks import first_unseeded_draw

# The call that seeds each module's generator, by the module's own name; the script's name for it fills in {name}.
SEED_CALLS = {"torch": "{name}.manual_seed(0)", "random": "{name}.seed(0)", "numpy": "{name}.random.seed(0)"}


def seeded(text: str) -> tuple[str, list[str]]:
    """The script with a seed call for each random module it imports by name (`import torch`, `import numpy as np`)
    inserted after its last top-level import, and the calls added; the text unchanged and no call where it already
    seeds, draws nothing at random, or imports none of them."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text, []
    if first_unseeded_draw(tree) is None:
        return text, []
    calls, last = [], 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
        if isinstance(node, ast.Import):
            calls += [SEED_CALLS[a.name].format(name=a.asname or a.name) for a in node.names if a.name in SEED_CALLS]
    if not calls:
        return text, []
    lines = text.splitlines(keepends=True)
    added = "".join(f"{call}  # added by reprokit new-case: the script drew random data with no seed\n"
                    for call in dict.fromkeys(calls))
    return "".join(lines[:last]) + added + "".join(lines[last:]), list(dict.fromkeys(calls))



def seeded_copy(source: Path, text: str, log) -> tuple[Path, str] | None:
    """The seeded script, written under its own name in a new temporary folder (the caller removes it), and its text;
    None where nothing needs seeding or nothing can be (then `validate` refuses it, as before, and says why)."""
    new, calls = seeded(text)
    if not calls:
        return None
    copy = Path(tempfile.mkdtemp(prefix="reprokit-seeded-")) / source.name
    copy.write_text(new, encoding="utf-8")
    log(f"seeded: {source.name} draws random data with no seed, so a wrong-result verdict could differ run to run; "
        f"the case's repro.py calls {', '.join(calls)} after its imports")
    return copy, new
