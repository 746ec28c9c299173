"""Checks of a case's oracle that `validate` runs without a run: an oracle that torch's boilerplate would satisfy,
and a wrong-result oracle over random data with no seed (a repro whose verdict depends on the draw is flaky)."""

from __future__ import annotations

import ast
from pathlib import Path

import regex

from reprokit.model.case import Case

# Text torch prints around many errors whatever failed (torch 2.8 - 2.15, read from recorded messages): the graph-break
# site, the verbose and logging hints, the custom-op and exportdb pages, the user-code marker. A `match` that finds
# something in this text alone would reproduce on every graph break.
BOILERPLATE = """
 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html
Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"
For more information, run with TORCH_LOGS="dynamic"
For extended logs when we create symbols, also add TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL="u0"
from user code:
   File "repro.py", line 12, in forward
https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html
https://pytorch.org/docs/stable/library.html#torch.library.opcheck
https://pytorch.org/docs/main/generated/exportdb/index.html#
https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
https://pytorch.org/docs/stable/elastic/errors.html
"""

_RANDOM_CALLS = {
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "normal",
    "bernoulli",
    "multinomial",
    "uniform_",
    "normal_",
    "random",
    "choice",
    "shuffle",
    "dropout",
}
_SEEDS = {"manual_seed", "seed", "default_rng"}


def oracle_problems(yml: Path, case: Case) -> list[str]:
    problems = []
    oracles = [
        ("expect.repro", case.expect.repro),
        *((f"overrides.{name}.repro", e.repro) for name, e in case.overrides.items()),
    ]
    for where, oracle in oracles:
        if oracle.match and _matches_boilerplate(oracle.match):
            problems.append(
                f"{yml}: {where}.match: {oracle.match!r} matches text torch prints around every error "
                "(a documentation link or a logging hint); match the failure's own words"
            )
    if any(o.kind == "wrong-result" for _, o in oracles) and (line := unseeded_random(yml.parent / "repro.py")):
        problems.append(
            f"{yml.parent / 'repro.py'}:{line}: a wrong-result repro draws random data with no seed "
            "(torch.manual_seed): its verdict can differ run to run"
        )
    return problems


def _matches_boilerplate(pattern: str) -> bool:
    try:
        return regex.search(pattern, BOILERPLATE, regex.MULTILINE, timeout=2.0) is not None
    except (regex.error, TimeoutError):
        return False  # an invalid pattern is the case model's own one-line error


def unseeded_random(script: Path) -> int | None:
    """The line of the first random draw in a script that never seeds (torch.manual_seed, random.seed, ...)."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    return first_unseeded_draw(tree)


def first_unseeded_draw(tree: ast.Module) -> int | None:
    """unseeded_random of a parsed script."""
    names = [(n.lineno, _called(n)) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    if any(name in _SEEDS for _, name in names):
        return None
    return min((line for line, name in names if name in _RANDOM_CALLS), default=None)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
