"""Is a low-precision mismatch a wrong result? PyTorch's bug form asks accuracy reports to compare eager and compiled
against a higher-precision baseline (`torch._dynamo.utils.same` with an fp64 reference), never bf16 with bf16:
compiled code that keeps an intermediate in fp32 differs from eager, which rounds after every op, and is often the
more accurate of the two.

For a script whose failure is its own comparison (torch.allclose, torch.equal, torch.testing.assert_close) of
bfloat16 / float16 outputs, three contained runs of the script with a prelude that saves what each comparison is
given (as float64, into a folder the run may write): as it is (the failing comparison is the last one saved); with
every `torch.compile` backend replaced by `eager` (the side that changes between the two is the compiled one); and
with every low-precision dtype meaning float64 (the reference; its random draws are made in the low-precision dtype
and widened, and `.to(torch.float64)` / `.bfloat16()` / `.half()` round through it first, so that it starts from the
very inputs the failing run had). A fourth, of our own code, weighs them the way
`same` does: the compiled side's RMS error against the reference may be at most twice eager's, plus 1e-5.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from reprokit.run.child_setup import write_readable_script

LOW_PRECISION = re.compile(r"\btorch\.(bfloat16|float16|half)\b|\.(bfloat16|half)\(\)")
COMPARISON_FAILED = re.compile(r"Tensor-likes are not (close|equal)|Mismatched elements|allclose|torch\.equal")
MAX_ELEMENTS = 1 << 20  # of each compared tensor: larger ones are not captured
MULTIPLIER, TOL = 2.0, 1e-5  # torch._dynamo.utils.same: res_error <= multiplier * ref_error + tol / 10 (tol 1e-4)

PRELUDE = """\
import json as _reprokit_json, os as _reprokit_os, random as _reprokit_random, torch as _reprokit_torch
# the script's own inputs fixed: every side draws the same random numbers (an unseeded script's sides differ otherwise)
_reprokit_random.seed(0)
_reprokit_torch.manual_seed(0)
try:
    import numpy as _reprokit_numpy
    _reprokit_numpy.random.seed(0)
except ImportError:
    pass
def _reprokit_capture(owner, name):
    original = getattr(owner, name)
    def compare(*args, **kwargs):
        sides = [a for a in args[:2] if isinstance(a, _reprokit_torch.Tensor)]
        if len(sides) == 2 and all(s.numel() <= MAX for s in sides):
            folder = _reprokit_os.environ["REPROKIT_CAPTURE"]
            path = _reprokit_os.path.join(folder, "%04d.json" % len(_reprokit_os.listdir(folder)))
            with open(path, "w") as out:
                _reprokit_json.dump([{"shape": list(s.shape), "values": s.detach().cpu().double().flatten().tolist()}
                                     for s in sides], out)
        return original(*args, **kwargs)
    setattr(owner, name, compare)
for _reprokit_owner, _reprokit_name in ((_reprokit_torch, "allclose"), (_reprokit_torch, "equal"),
                                        (_reprokit_torch.testing, "assert_close")):
    _reprokit_capture(_reprokit_owner, _reprokit_name)
""".replace("MAX", str(MAX_ELEMENTS))

# The reference run: the script's low-precision dtype names mean float64, from the same inputs (see the module's text).
REFERENCE = """\
_reprokit_low = getattr(_reprokit_torch, %r)
for _reprokit_name in ("bfloat16", "float16", "half"):
    setattr(_reprokit_torch, _reprokit_name, _reprokit_torch.float64)
def _reprokit_widened(original):
    def make(*args, **kwargs):
        if kwargs.get("dtype") is _reprokit_torch.float64:
            return original(*args, **{**kwargs, "dtype": _reprokit_low}).to(_reprokit_torch.float64)
        return original(*args, **kwargs)
    return make
for _reprokit_name in ("randn", "rand", "randn_like", "rand_like", "normal", "randint", "randint_like"):
    setattr(_reprokit_torch, _reprokit_name, _reprokit_widened(getattr(_reprokit_torch, _reprokit_name)))
_reprokit_to = _reprokit_torch.Tensor.to
def _reprokit_to_wide(self, *args, **kwargs):
    wanted = kwargs.get("dtype", args[0] if args and isinstance(args[0], _reprokit_torch.dtype) else None)
    if wanted is _reprokit_torch.float64 and self.is_floating_point() and self.dtype is not _reprokit_torch.float64:
        self = _reprokit_to(self, _reprokit_low)
    return _reprokit_to(self, *args, **kwargs)
_reprokit_torch.Tensor.to = _reprokit_to_wide
_reprokit_torch.Tensor.bfloat16 = lambda self, *a, **k: _reprokit_to(self, _reprokit_low).double()
_reprokit_torch.Tensor.half = lambda self, *a, **k: _reprokit_to(self, _reprokit_low).double()
"""

JUDGE = """\
import json, os, pathlib, torch
def last(folder, index=None):
    files = sorted(pathlib.Path(os.environ[folder]).glob("*.json"))
    if not files or (index is not None and index >= len(files)):
        return None, None
    index = len(files) - 1 if index is None else index
    try:
        sides = json.loads(files[index].read_text())
        return index, [torch.tensor(s["values"], dtype=torch.float64).reshape(s["shape"]) for s in sides]
    except (ValueError, KeyError, TypeError, RuntimeError):
        return None, None
index, low = last("REPROKIT_LOW")
_, eager_backend = last("REPROKIT_EAGER", index) if low else (None, None)
_, ref = last("REPROKIT_REF", index) if low else (None, None)
out = {"judged": False}
if low and eager_backend and ref and len(low) == len(ref) == len(eager_backend) == 2 and all(a.shape == b.shape for a, b in zip(low, ref)):
    changed = [not torch.equal(a, b) for a, b in zip(low, eager_backend)]
    if changed.count(True) == 1:
        c = changed.index(True)
        e = 1 - c
        rms = lambda x: float(torch.sqrt(torch.mean((x - ref[e]) ** 2))) if x.numel() else 0.0
        out = {"judged": True, "compiled_error": rms(low[c]), "eager_error": rms(low[e]), "comparison": index + 1}
    else:
        out["why"] = "no single side of the comparison changes when the compile backend is eager"
print("REPROKIT-FP64 " + json.dumps(out))
"""


@dataclass(frozen=True)
class Fp64Judgement:
    """The fp64 reference's word on a low-precision mismatch."""

    judged: bool
    compiled_error: float = 0.0
    eager_error: float = 0.0
    why: str = ""

    @property
    def wrong_result(self) -> bool:
        return self.judged and self.compiled_error > MULTIPLIER * self.eager_error + TOL

    def line(self) -> str:
        if not self.judged:
            return f"not judged against an fp64 reference: {self.why}"
        said = "a wrong result" if self.wrong_result else "not a wrong result"
        return (
            f"{said} against an fp64 reference: compiled RMS error {self.compiled_error:.3g}, eager's "
            f"{self.eager_error:.3g} (wrong only above {MULTIPLIER:g} x eager's + {TOL:g})"
        )


# a comparison of values in the script: an AssertionError raised without one (eager refused, compiled did not) is no
# numeric mismatch, and an fp64 reference has nothing to judge
COMPARES = re.compile(
    r"assert_close|allclose|isclose|torch\.equal|assertEqual|assert_equal|^\s*assert\b[^\n]*"
    r"(?:==|!=|<|>|close|equal)",
    re.M,
)


def applies(script: str, exception: str | None, message: str | None) -> bool:
    """The failure is the script's own comparison of values, and the script uses a low-precision dtype."""
    compared = (exception or "").rsplit(".", 1)[-1] == "AssertionError" or bool(COMPARISON_FAILED.search(message or ""))
    return compared and bool(COMPARES.search(script)) and bool(LOW_PRECISION.search(script))


def _after_future_imports(script: str, prelude: str) -> str:
    lines = script.splitlines(keepends=True)
    at = max((i + 1 for i, ln in enumerate(lines) if ln.startswith("from __future__ import")), default=0)
    return "".join(lines[:at]) + prelude + "".join(lines[at:])


def captured(script: str) -> str:
    return _after_future_imports(script, PRELUDE)


def in_float64(script: str) -> str:
    """The capturing script run as the reference: its low-precision dtype means float64, from the same inputs."""
    low = "float16" if not re.search(r"bfloat16", script) else "bfloat16"
    return _after_future_imports(script, PRELUDE + REFERENCE % low)


def verdict(stdout: str) -> Fp64Judgement:
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("REPROKIT-FP64 ")), None)
    try:
        data = json.loads(line.split(" ", 1)[1]) if line else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict) or not data.get("judged"):
        why = data.get("why") if isinstance(data, dict) else None
        return Fp64Judgement(
            False, why=str(why or "the script's comparisons were not captured in all three runs")[:200]
        )
    try:
        return Fp64Judgement(True, float(data["compiled_error"]), float(data["eager_error"]))
    except (KeyError, TypeError, ValueError):
        return Fp64Judgement(False, why="the judge printed no errors")


def judge_script(folder: Path) -> Path:
    return write_readable_script(folder / "fp64_judge.py", JUDGE)
