"""What a script's code says, read from its syntax tree, never from its comments or docstrings: the devices it runs
on, whether it is a torchrun program and with how many ranks, the dtypes it names, whether it calls torch.compile,
and where it reads the corpus's REPRO_DEVICE / REPRO_DTYPE variables."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import resource
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.schema import InputError

REPRO_VARIABLES = ("REPRO_DEVICE", "REPRO_DTYPE")
# torch dtypes a case may declare (model/schema.py DType), by the attribute names torch has for them
DTYPE_NAMES = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "bfloat16": "bfloat16",
    "float16": "float16",
    "half": "float16",
    "float8_e4m3fn": "float8_e4m3fn",
}
_NPROC = re.compile(r"^--nproc[-_]per[-_]node[= ](\d+)$")


SCRIPT_LIMIT = 1 << 20  # bytes: a repro is a few KB; a larger file is refused before anything reads it whole
PARSE_MEMORY = 1 << 30  # bytes of address space the syntax tree of one script may take (1 MB of code: ~100 MB)


def read_script(path: Path, where: str = "--from") -> str:
    """The text of a script to make a case of: at most SCRIPT_LIMIT bytes, UTF-8, and a syntax tree that builds within
    PARSE_MEMORY and Python's recursion limit; InputError (one line) otherwise. After it, parsing the text is safe."""
    try:
        size = os.stat(path).st_size
    except OSError as err:
        raise InputError(f"{where} {path}: cannot be read ({err.strerror})") from None
    if size > SCRIPT_LIMIT:
        raise InputError(f"{where} {path}: {size} bytes, more than the {SCRIPT_LIMIT} a case script may have")
    with open(path, "rb") as fh:
        data = fh.read(SCRIPT_LIMIT + 1)
    if len(data) > SCRIPT_LIMIT:
        raise InputError(f"{where} {path}: more than the {SCRIPT_LIMIT} bytes a case script may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{where} {path}: not UTF-8 (byte {err.start}); a case script is UTF-8 text") from None
    parse(text, f"{where} {path}")
    return text


@contextlib.contextmanager
def _address_space(extra: int):
    """At most `extra` more bytes of address space for this process while the block runs (RLIMIT_AS)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        used = None
    limit = used + extra if used is not None else None
    if limit is not None and (hard == resource.RLIM_INFINITY or limit < hard):
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def parse(text: str, where: str = "script") -> ast.Module | None:
    """The script's syntax tree, or None where it does not parse; built within PARSE_MEMORY bytes, and an expression
    nested too deeply for Python is an InputError in one line (never a RecursionError traceback)."""
    if len(text) > SCRIPT_LIMIT:
        raise InputError(f"{where}: more than the {SCRIPT_LIMIT} bytes a case script may have")
    try:
        with _address_space(PARSE_MEMORY):
            return ast.parse(text)
    except SyntaxError:
        return None
    except RecursionError:
        raise InputError(f"{where}: an expression is nested too deeply for Python to read it") from None
    except MemoryError:
        raise InputError(f"{where}: its syntax tree needs more than {PARSE_MEMORY >> 20} MiB") from None


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (the first statement of a module, class or function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def code_strings(tree: ast.AST) -> list[str]:
    """Every string constant of the code, docstrings left out (comments are not in the tree at all)."""
    skip = _docstrings(tree)
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
    ]


def dotted(node: ast.AST) -> str:
    """`torch.cuda.is_available` for the expression torch.cuda.is_available; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update([node.module, *(f"{node.module}.{a.name}" for a in node.names)])
    return names


@dataclass(frozen=True)
class ScriptFacts:
    reads_device: bool  # REPRO_DEVICE is read: any device
    cuda_only: bool  # a hard-coded "cuda" device string or a .cuda() call, and no REPRO_DEVICE
    torchrun: bool
    world_size: int | None
    dtypes: tuple[str, ...]  # the dtypes the code names (torch.bfloat16, ...), when it does not read REPRO_DTYPE
    reads_dtype: bool
    compiles: bool  # calls torch.compile (or decorates with it), or torch._dynamo.optimize

    def requires(self) -> dict:
        """case.yaml `requires` as the code gives it (devices, launcher, world_size, dtypes)."""
        out: dict = {"devices": ["cpu", "cuda"] if self.reads_device else ["cuda"] if self.cuda_only else ["cpu"]}
        if self.torchrun:
            out.update(world_size=self.world_size or 2, launcher="torchrun")
        if not self.reads_dtype and len(self.dtypes) == 1 and self.dtypes[0] != "float32":
            out["dtypes"] = list(self.dtypes)
        return out


def facts(text: str) -> ScriptFacts:
    tree = parse(text)
    if tree is None:
        return ScriptFacts(False, False, False, None, (), False, False)
    strings = code_strings(tree)
    calls = [dotted(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    attributes = [dotted(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    decorators = [
        dotted(d.func if isinstance(d, ast.Call) else d)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        for d in n.decorator_list
    ]
    imported = _imported(tree)
    cuda_string = any(re.fullmatch(r"cuda(:\d+)?", s) for s in strings)
    cuda_call = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "cuda" for n in ast.walk(tree)
    )
    torchrun = (
        any("torchrun" in s or s.startswith("--nproc") for s in strings)
        or "torch.distributed.run" in imported
        or any(s in ("RANK", "LOCAL_RANK", "WORLD_SIZE") for s in strings)
    )
    nproc = next((int(m.group(1)) for s in strings if (m := _NPROC.match(s))), None)
    named = sorted(
        {
            DTYPE_NAMES[a.split(".")[-1]]
            for a in attributes
            if a.startswith("torch.") and a.count(".") == 1 and a.split(".")[-1] in DTYPE_NAMES
        }
    )
    compiles = any(c in ("torch.compile", "torch._dynamo.optimize") for c in [*calls, *decorators]) or (
        "torch.compile" in imported and any(c == "compile" for c in calls)
    )
    return ScriptFacts(
        reads_device="REPRO_DEVICE" in strings,
        cuda_only=cuda_string or cuda_call,
        torchrun=torchrun,
        world_size=nproc,
        dtypes=tuple(named),
        reads_dtype="REPRO_DTYPE" in strings,
        compiles=compiles,
    )


_BORING = re.compile(
    r"^torch\.(compile|manual_seed|randn|rand|randint|ones|zeros|tensor|arange|empty|testing\..*|"
    r"no_grad|_dynamo\.(reset|config\..*)|cuda\.(is_available|set_device|synchronize))$"
)


def torch_calls(text: str) -> list[str]:
    """The torch functions and modules the script calls (torch.nn.TransformerEncoderLayer, torch.linalg.cond), in
    the order they first appear, without the set-up ones (tensor factories, seeds, torch.compile, torch.testing)."""
    tree = parse(text)
    if tree is None:
        return []
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    alias = _torch_aliases(tree)
    names = [".".join([alias.get(first, first), *rest]) for first, *rest in (dotted(n.func).split(".") for n in calls)]
    return list(dict.fromkeys(n for n in names if n.startswith("torch.") and not _BORING.match(n)))


def _torch_aliases(tree: ast.AST) -> dict[str, str]:
    """Local names of torch modules: `from torch import nn` -> nn: torch.nn, `import torch.nn.functional as F`."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("torch")})
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch") and node.level == 0:
            found.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return found


def docstring_title(text: str) -> str | None:
    """The first line of the script's module docstring (an issue's title, as the contributor pasted it)."""
    try:
        doc = ast.get_docstring(ast.parse(text))
    except SyntaxError:
        return None
    line = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
    return line or None
