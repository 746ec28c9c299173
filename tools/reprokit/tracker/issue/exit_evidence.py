"""What an issue's script says by its exit status, read from its syntax tree: a script that lets torch's exception end
the process (no try/except swallowing a compiled call) or that asserts on its results exits non-zero while the bug is
there, so its exit 0 is evidence; one that catches the compiled call's error, or only prints what it computed, exits 0
either way and says nothing by it. A script that prints no result, catches nothing and asserts nothing has torch's
exception as its only way to fail: its exit status decides, whatever the issue quotes (a traceback or one line of
Dynamo's message). Pure: nothing is run."""

from __future__ import annotations

import ast
from enum import Enum

from reprokit.contrib.script_code import dotted, parse

COMPILERS = (
    "torch.compile",
    "torch._dynamo.optimize",
    "torch.export.export",
    "torch.export",
    "torch.jit.script",
    "torch._dynamo.export",
)
# calls whose failure the script reports on its own: an assertion helper raises, so the exit status speaks
PRINTING = ("print", "pprint", "pprint.pprint", "sys.stdout.write", "sys.stderr.write")
ASSERTING = (
    "torch.testing.assert_close",
    "torch.testing.assert_allclose",
    "numpy.testing.assert_allclose",
    "np.testing.assert_allclose",
    "sys.exit",
    "exit",
)


class ExitEvidence(str, Enum):
    RAISES = "raises"  # torch's exception from the compiled call ends the process
    ASSERTS = "asserts"  # the script checks its results and fails on a mismatch
    CATCHES = "catches"  # a try/except swallows the compiled call's error
    PRINTS_ONLY = "prints only"  # the script reports values; nothing in it fails on a wrong one

    @property
    def decides(self) -> bool:
        """Whether the script's exit 0 says the failure did not happen."""
        return self in (ExitEvidence.RAISES, ExitEvidence.ASSERTS)

    def words(self) -> str:
        return {
            ExitEvidence.RAISES: "torch's exception would end it",
            ExitEvidence.ASSERTS: "it asserts on its results",
            ExitEvidence.CATCHES: "the script catches the compiled call's error, so its exit status says nothing",
            ExitEvidence.PRINTS_ONLY: "the script only prints its results, so its exit status says nothing",
        }[self]


def _compiled_names(tree: ast.AST) -> set[str]:
    """Names bound to compiled callables: decorated functions, `g = torch.compile(f)`, `model = torch.compile(m)`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if dotted(d.func if isinstance(d, ast.Call) else d) in COMPILERS:
                    names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            inner = func.func if isinstance(func, ast.Call) else func  # torch._dynamo.optimize("eager")(f)
            if dotted(inner) in COMPILERS:
                names.update(dotted(t) for t in node.targets if dotted(t))
    return names


def _calls_compiled(node: ast.AST, compiled: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            name = dotted(sub.func)
            if (
                name in compiled
                or name in COMPILERS
                or (isinstance(sub.func, ast.Call) and dotted(sub.func.func) in COMPILERS)
            ):
                return True
            if isinstance(sub.func, ast.Attribute) and dotted(sub.func.value) in compiled:
                return True  # compiled_model.forward(x), compiled_module(x) through a method
    return False


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(
        isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and dotted(n.func) in ("sys.exit", "exit"))
        for n in ast.walk(handler)
    )


def _asserts(tree: ast.AST) -> bool:
    in_handlers = {id(n) for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) for n in ast.walk(h)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) or (isinstance(node, ast.Raise) and id(node) not in in_handlers):
            return True
        if isinstance(node, ast.Call) and (
            dotted(node.func) in ASSERTING or dotted(node.func).endswith(("assert_close", "assertEqual"))
        ):
            return True
    return False


def _prints_a_result(tree: ast.AST) -> bool:
    """A print of something the script computed: a call to print (or its kin) with an argument that is not a
    literal (`print("compiled ok")` reports progress, `print(out)` a value someone must read)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func) in PRINTING:
            for arg in [*node.args, *(k.value for k in node.keywords if k.arg is None)]:
                if not isinstance(arg, ast.Constant):
                    return True
    return False


def of(script: str, reports_error: bool) -> ExitEvidence:
    """How the script reports a failure, read from its code. A script that prints no result decides by its exit
    status; one that prints results decides only where the issue reports an exception or a crash
    (`reports_error`: then it still fails by torch's own exception), else it only prints."""
    tree = parse(script)
    if tree is None:
        return ExitEvidence.PRINTS_ONLY
    compiled = _compiled_names(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Try)
            and node.handlers
            and _calls_compiled(ast.Module(node.body, []), compiled)
            and not all(_reraises(h) for h in node.handlers)
            and not _asserts(ast.Module(node.orelse, []))
        ):
            return ExitEvidence.CATCHES  # (a `try: compiled() except: ... else: raise` fails when it does not raise)
    if _asserts(tree):
        return ExitEvidence.ASSERTS
    return ExitEvidence.RAISES if reports_error or not _prints_a_result(tree) else ExitEvidence.PRINTS_ONLY
