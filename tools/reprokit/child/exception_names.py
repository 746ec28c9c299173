"""Which exception class names the torch of this interpreter has, for `reprokit validate`.

Run as a case script (the runner contains it exactly as a case): $REPROKIT_DOTTED_NAMES is a JSON list of dotted names,
each under `torch.`; prints one line `REPROKIT_EXCEPTION_NAMES {json}`: "bare" (every exception class name of builtins
and of torch, after importing the modules that define them) and "dotted" (name -> "class", "missing" or "not an
exception class"). Only modules under `torch` are ever imported. Standard library and torch only, like probe.py.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys

# torch modules whose import defines the exception classes an oracle may name by their bare name.
TORCH_MODULES = (
    "torch",
    "torch._dynamo",
    "torch._dynamo.exc",
    "torch._inductor.exc",
    "torch.export",
    "torch.fx.experimental.symbolic_shapes",
    "torch._subclasses.fake_tensor",
    "torch.distributed",
    "torch.distributed.tensor",
    "torch.distributed.fsdp",
    "torch.utils._sympy.value_ranges",
)


def _dotted(name: str) -> str:
    parts = name.split(".")
    if parts[0] != "torch" or len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return "missing"  # never looked up: the runner sends only names under torch.
    module, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return "missing"
    except Exception:  # noqa: BLE001 - a torch module that fails to import here defines nothing to find
        return "missing"
    return "class" if isinstance(obj, type) and issubclass(obj, BaseException) else "not an exception class"


def _forget_the_package() -> None:
    """No folder of the search path that holds the package (an editable install's .pth puts the checkout's tools/
    there), no editable-install finder: only torch and the standard library are importable here."""
    sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "reprokit"))]
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]


def main() -> None:
    _forget_the_package()
    names = json.loads(os.environ.get("REPROKIT_DOTTED_NAMES", "[]"))
    try:
        importlib.import_module("torch")
    except ImportError:
        print("REPROKIT_EXCEPTION_NAMES " + json.dumps({"torch": False}), flush=True)
        return
    for module in TORCH_MODULES:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a module this build lacks (e.g. no distributed) defines nothing to find
            continue
    bare: set[str] = set()
    todo: list[type[BaseException]] = [BaseException]
    while todo:
        cls = todo.pop()
        bare.add(cls.__name__)
        todo += cls.__subclasses__()
    package = importlib.util.find_spec("reprokit") is not None  # nothing of the repository may be importable here
    answer = {
        "torch": True,
        "package": package,
        "bare": sorted(bare),
        "dotted": {n: _dotted(n) for n in names if isinstance(n, str)},
    }
    print("REPROKIT_EXCEPTION_NAMES " + json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
