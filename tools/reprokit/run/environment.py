"""What machine and software a run happened on: torch's collect_env plus device facts, read in a child process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Collection

from reprokit.model.matrix import Target
from reprokit.model.schema import EnvironmentProblem

# Runs in the case interpreter: the runner itself never imports torch.
_FACTS = r"""
import json, platform, torch
from torch.utils import collect_env
facts = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
         "python": platform.python_version(), "device_kind": "cpu", "device_count": 0, "device_name": None,
         "compute_capability": None, "gfx_arch": None, "cpu": platform.processor() or platform.machine()}
if torch.cuda.is_available():
    props = torch.cuda.get_device_properties(0)
    facts.update(device_kind="rocm" if facts["hip"] else "cuda", device_count=torch.cuda.device_count(),
                 device_name=torch.cuda.get_device_name(0), compute_capability=float(f"{props.major}.{props.minor}"),
                 gfx_arch=getattr(props, "gcnArchName", None) if facts["hip"] else None)
else:
    try:
        import torch_npu  # noqa: F401
        if torch.npu.is_available():
            facts.update(device_kind="npu", device_count=torch.npu.device_count(),
                         device_name=torch.npu.get_device_name(0), torch_npu=torch_npu.__version__)
    except ImportError:
        pass
try:
    info = collect_env.get_env_info()._asdict()
except Exception as err:  # collect_env shells out to pip, nvidia-smi...: a broken one must not stop the run
    info = {"error": repr(err)}
facts["driver"] = info.get("nvidia_driver_version")
facts["collect_env"] = info
import importlib.metadata as metadata
facts["packages"] = {}
for name in PACKAGES:
    try:
        facts["packages"][name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        facts["packages"][name] = None
print("REPROKIT_FACTS" + json.dumps(facts, default=str))
"""

# Optional packages whose versions the facts record (None: not installed): a sweep structure builds its model with
# transformers, an FP8 cell converts it with torchao; without one a cell is skipped, never counted as a failure.
PACKAGES = ("transformers", "torchao")


# The accelerator alone, in the case interpreter (no collect_env: a second, not a minute).
_DEVICE = r"""
import json, torch
facts = {"device_kind": "cpu", "device_name": None, "compute_capability": None}
if torch.cuda.is_available():
    props = torch.cuda.get_device_properties(0)
    facts.update(device_kind="rocm" if getattr(torch.version, "hip", None) else "cuda",
                 device_name=torch.cuda.get_device_name(0), compute_capability=float(f"{props.major}.{props.minor}"))
print("REPROKIT_FACTS" + json.dumps(facts))
"""


def device_facts(python: str = sys.executable, timeout: float = 120) -> dict:
    """This machine's accelerator as the case interpreter's torch sees it ({} when that cannot be read)."""
    try:
        with tempfile.TemporaryDirectory(prefix="reprokit-facts-") as neutral:
            proc = subprocess.run(
                [python, "-c", _DEVICE],
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                cwd=neutral,
                env={**os.environ, "PYTHONSAFEPATH": "1"},
            )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("REPROKIT_FACTS")), None)
    return json.loads(line[len("REPROKIT_FACTS") :]) if line else {}


def target_here(targets: dict[str, Target], kinds: Collection[str], facts: dict) -> str | None:
    """The first target of one of `kinds` whose hardware this machine is (hardware_mismatch finds nothing)."""
    return next(
        (
            name
            for name, t in targets.items()
            if t.device.kind in kinds and t.device.kind != "cpu" and hardware_mismatch(name, t, facts) is None
        ),
        None,
    )


def collect(python: str = sys.executable, timeout: float = 300) -> dict:
    # From an empty folder, with PYTHONSAFEPATH (python -P, 3.11+): `python -c` puts the working directory first on
    # sys.path, and a platform.py at a repository's root would run, as the runner, with its whole environment.
    try:
        with tempfile.TemporaryDirectory(prefix="reprokit-facts-") as neutral:
            script = f"PACKAGES = {PACKAGES!r}\n" + _FACTS
            proc = subprocess.run(
                [python, "-c", script],
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                cwd=neutral,
                env={**os.environ, "PYTHONSAFEPATH": "1"},
            )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise EnvironmentProblem(f"{python}: could not read the environment ({err})") from None
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("REPROKIT_FACTS")), None)
    if line is None:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"{python}: cannot import torch to read the environment ({last})")
    return json.loads(line[len("REPROKIT_FACTS") :])


def hardware_mismatch(name: str, target: Target, facts: dict) -> str | None:
    """Why the machine is not the target's hardware, or None if it is."""
    want = target.device
    if want.kind == "cpu":
        return None
    found = facts.get("device_name") or "no accelerator"
    if facts.get("device_kind") != want.kind:
        return f"target {name} needs a {want.kind} device, found {found} ({facts.get('device_kind')})"
    if want.compute_capability and facts.get("compute_capability") != want.compute_capability:
        return (
            f"target {name} needs compute capability {want.compute_capability}, "
            f"found {found} ({facts.get('compute_capability')})"
        )
    if want.gfx_arch and not str(facts.get("gfx_arch") or "").startswith(want.gfx_arch):
        return f"target {name} needs {want.gfx_arch}, found {found} ({facts.get('gfx_arch')})"
    if want.name_pattern and not re.search(want.name_pattern, found):
        return f"target {name} needs a device matching {want.name_pattern!r}, found {found}"
    return None
