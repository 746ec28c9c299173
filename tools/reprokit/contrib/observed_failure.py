"""A new case's title and category from what its first run observed: the stage that failed (read from the
traceback's torch frames where the probe could only say "runtime"), the torch API on the script's failing line, and
the stable words of torch's message (no regex, no verdict, no tensor sizes that change from run to run)."""

from __future__ import annotations

import ast
import re

from reprokit.contrib.script_code import parse, torch_calls
from reprokit.run.execute import Observation

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)')
# The subsystem a torch frame's file belongs to; the innermost such frame of the tracebacks names the stage.
_STAGE_OF_PATH = (
    ("inductor", "torch/_inductor/"),
    ("aot_autograd", "torch/_functorch/"),
    ("aot_autograd", "torch/_subclasses/"),
    ("aot_autograd", "torch/fx/experimental/proxy_tensor"),
    ("dynamo", "torch/_dynamo/"),
    ("dynamo", "torch/fx/experimental/symbolic_shapes"),
    ("export", "torch/export/"),
    ("export", "torch/_export/"),
    ("distributed", "torch/distributed/"),
    ("distributed", "torch/nn/parallel/"),
)

# An issue's area -> the category that files it (the area, where given, is the more specific).
AREA_CATEGORY = {
    "graph-break": "diagnosis",
    "guards-recompile": "diagnosis",
    "dynamic-shape": "dynamic-shape",
    "custom-op": "custom-op",
    "fake-tensor": "type-inference",
    "aot-autograd": "type-inference",
    "inductor-cpu": "fusion",
    "inductor-cuda": "fusion",
    "export": "dynamic-shape",
    "ddp": "ddp",
    "fsdp": "fsdp",
    "dtensor": "dtensor",
    "autocast": "amp",
    "hang": "diagnosis",
}
# The API the script calls -> its category, checked in this order (the more specific first).
API_CATEGORY = (
    ("fsdp", r"fsdp|fully_shard"),
    ("dtensor", r"distributed\.tensor|DTensor|distribute_tensor"),
    ("ddp", r"DistributedDataParallel|torch\.distributed"),
    ("amp", r"autocast|torch\.amp"),
    ("custom-op", r"torch\.library|custom_op"),
    ("dynamic-shape", r"mark_dynamic|torch\.export"),
)
# Words of torch's message -> its category, then the failing stage's.
MESSAGE_CATEGORY = (
    ("dynamic-shape", r"(?i)data.dependent|symbolic|unbacked|dynamic shape|guard on"),
    ("type-inference", r"(?i)\bdtype\b|\bmeta\b|fake ?tensor|stride"),
)
# A graph break, in torch's words (dynamo's Unsupported says "graph break" in the link it adds, TORCH_LOGS in its
# lines): its category is its reason's, else the corpus's for graph breaks (AREA_CATEGORY["graph-break"]). The reason
# is what comes before the link and the user frames; an operator torch cannot run with fake tensors is a custom op's.
GRAPH_BREAK = re.compile(r"(?i)graph break")
GRAPH_BREAK_CATEGORY = (
    ("custom-op", r"(?i)unsupported operator: (?!aten\.|prims\.)\w+\.|custom[ _]op|torch\.library"),
    *MESSAGE_CATEGORY,
)
_URL = re.compile(r"https?://\S+")
_REASON_ENDS = re.compile(r"(?i)for more details about this graph break|^from user code:", re.M)
STAGE_CATEGORY = {
    "dynamo": "diagnosis",
    "aot_autograd": "type-inference",
    "inductor": "fusion",
    "export": "dynamic-shape",
    "distributed": "ddp",
}


def _frames(stderr: str) -> list[tuple[str, int]]:
    """(file, line) of every frame of every traceback in stderr, in the order printed (innermost last)."""
    return [
        (m.group("file").replace("\\", "/"), int(m.group("line")))
        for line in stderr.splitlines()
        if (m := _FRAME.match(line))
    ]


def failing_stage(obs: Observation | None) -> str | None:
    """The probe's stage, or where it could only say "runtime" (or nothing), the subsystem of the innermost torch
    frame the tracebacks printed."""
    if obs is None:
        return None
    if obs.stage and obs.stage != "runtime":
        return obs.stage
    found = [stage for file, _ in _frames(obs.stderr_tail) for stage, part in _STAGE_OF_PATH if part in file]
    return found[-1] if found else obs.stage


def failing_api(obs: Observation | None, text: str, script_name: str) -> str | None:
    """The torch function called on the script's innermost failing line (torch.linalg.cond); else the first torch
    function the script calls that is not set-up (a tensor factory, a seed, torch.compile itself)."""
    lines = [line for file, line in _frames(obs.stderr_tail if obs else "") if file.rsplit("/", 1)[-1] == script_name]
    tree = parse(text)
    if lines and tree is not None:
        on_line = [
            n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= lines[-1] <= (n.end_lineno or n.lineno)
        ]
        line_text = "\n".join(ast.get_source_segment(text, n) or "" for n in on_line)
        named = torch_calls(_with_imports(tree, text) + line_text)
        if named:
            return named[0]
    calls = torch_calls(text)
    return calls[0] if calls else None


def _with_imports(tree: ast.Module, text: str) -> str:
    """The script's import statements, so that a call on one line reads with its aliases (F.gelu)."""
    return "".join(
        (ast.get_source_segment(text, n) or "") + "\n" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
    )


def said(obs: Observation | None, headline: str) -> str:
    """What torch said of the failure, for its category: the exception's whole message (a graph break's reason is on
    its later lines), else the graph breaks its logs printed (TORCH_LOGS=graph_breaks), else the headline."""
    if obs is not None and obs.message:
        return obs.message
    logged = [line for line in (obs.stderr_tail if obs else "").splitlines() if GRAPH_BREAK.search(line)]
    return "\n".join(logged) or headline


def stable_words(message: str) -> str:
    """The first line of a message up to where run-to-run details start (numbers, quotes, brackets)."""
    line = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    prefix = re.split(r"[0-9'\"(\[<{]", line, maxsplit=1)[0].strip().rstrip(":,;.= ")
    if len(prefix) >= 12:
        return prefix[:90]
    return " ".join(w for w in line.split() if not re.search(r"\d", w))[:90]


def category(stage: str | None, api: str | None, text: str, message: str) -> str:
    """The category of a new case: from the APIs the script calls, then torch's message (a graph break's reason),
    then the failing stage. Links are no words of the message (the graph-break site's host says "meta")."""
    apis = " ".join(torch_calls(text)) + " " + (api or "") + (" mark_dynamic" if "dynamic=True" in text else "")
    for name, pattern in API_CATEGORY:
        if re.search(pattern, apis):
            return name
    if GRAPH_BREAK.search(message):
        reason = _URL.sub("", _REASON_ENDS.split(message, maxsplit=1)[0])
        return next(
            (name for name, pattern in GRAPH_BREAK_CATEGORY if re.search(pattern, reason)), AREA_CATEGORY["graph-break"]
        )
    message = _URL.sub("", message)
    for name, pattern in MESSAGE_CATEGORY:
        if re.search(pattern, message):
            return name
    return STAGE_CATEGORY.get(stage or "", "diagnosis")


def title(
    kind: str,
    reproduces: bool,
    obs: Observation | None,
    exception: str | None,
    message: str,
    api: str | None,
    stage: str | None,
    fallback: str,
) -> str:
    """A title from the run: the failing API and stage with torch's exception and its stable words; the output line
    an output oracle matched; the hang; never a regex, a verdict or a tensor's sizes."""
    where = " ".join(
        part for part in (f"in {stage}" if stage and stage != "runtime" else "", f"at {api}" if api else "") if part
    )
    where = f" {where}" if where else ""
    if reproduces and kind == "hangs":
        return f"{api or fallback} hangs{where}: still running after {obs.seconds:.0f} s" if obs else "hangs"
    if exception and exception.rsplit(".", 1)[-1] == "AssertionError":
        return f"wrong result{where}: {stable_words(message) or 'an assertion fails'}"[:120]
    if exception:
        return f"{exception.rsplit('.', 1)[-1]}{where}: {stable_words(message)}"[:120].rstrip(": ")
    if kind in ("stdout", "stderr") and obs is not None:
        shown = (obs.stdout_tail if kind == "stdout" else obs.stderr_tail).strip().splitlines()
        if shown:
            return f"{api or fallback} prints {shown[-1].strip()}"[:120]
    return f"{api or fallback}: runs to the end here"[:120]
