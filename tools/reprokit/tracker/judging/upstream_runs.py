"""The runs a bug report is made of, each contained exactly as `reprokit run` contains a case (run/execute.observe:
the keeper, namespaces, the drop to `nobody`, the subreaper, Landlock, an environment from an allow-list, a private
working folder, output through pipes into memory): the plain run of the standalone script, the same with
TORCHDYNAMO_VERBOSE=1, under TORCH_TRACE, and with every torch.compile backend replaced (the ablation). Nothing of
the runner's environment beyond the allow-list reaches the script, so nothing of it can reach the report.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.corpus import DEVICE_STRING
from reprokit.run.child_setup import ALLOWED_ENV, write_readable_script
from reprokit.run.execute import Observation, observe
from reprokit.tracker.text.standalone import standalone
from reprokit.tracker.text.traceback_text import headline

ABLATION = ("eager", "aot_eager", "inductor")  # pt2's ladder: the first backend that fails names the faulty stage
LOG_BYTES = 48_000  # of each output stream: GitHub refuses an issue body over 65,536 characters


@dataclass(frozen=True)
class Setting:
    """How every run of one report is made: the interpreter, the target's device and dtype, the case's limits."""

    python: str
    device_kind: str
    dtype: str
    timeout: float
    launcher: str = "python"
    world_size: int = 1

    @property
    def device(self) -> str:
        return DEVICE_STRING[self.device_kind]


def write_standalone(text: str, setting: Setting, folder: Path) -> Path:
    """folder/repro.py: the script with the run's device and dtype written in, readable by the case user."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_readable_script(folder / "repro.py", standalone(text, setting.device, setting.dtype))


def contained(
    setting: Setting, script: Path, extra_env: dict[str, str] | None = None, writable: tuple[Path, ...] = ()
) -> Observation:
    """One contained run of the script, as `reprokit run` makes it."""
    return observe(
        script,
        env=dict(os.environ),
        timeout=setting.timeout,
        extra_env={"REPRO_DEVICE": setting.device, "REPRO_DTYPE": setting.dtype, **(extra_env or {})},
        launcher=setting.launcher,
        world_size=setting.world_size,
        python=setting.python,
        writable=writable,
        tail_bytes=LOG_BYTES,
    )


def verbose(setting: Setting, script: Path) -> Observation:
    """The run again with TORCHDYNAMO_VERBOSE=1: the internal stack the error message asks bug reporters for."""
    return contained(setting, script, {"TORCHDYNAMO_VERBOSE": "1"})


def traced(setting: Setting, script: Path, trace_dir: Path) -> Observation:
    """The run again under TORCH_TRACE into trace_dir (the one folder besides its own that it may write)."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    return contained(setting, script, {"TORCH_TRACE": str(trace_dir)}, writable=(trace_dir,))


def summary(obs: Observation) -> str:
    """One line: the status and, when it raised, the exception and the first line of its message."""
    return obs.status + (f": {obs.exception}: {headline(obs.message)}"[:200] if obs.exception else "")


def ablation(setting: Setting, script: Path) -> dict[str, Observation]:
    """backend -> the run with every torch.compile call's backend replaced (its mode and options dropped)."""
    return {backend: contained(setting, script, {"REPROKIT_BACKEND": backend}) for backend in ABLATION}


def collect_env(python: str) -> str:
    """`python -m torch.utils.collect_env` with the same interpreter, in an environment from the allow-list (it
    runs no case code; nothing else of the runner's environment is passed)."""
    with tempfile.TemporaryDirectory(prefix="reprokit-collect-env-") as home:
        env = {k: v for k, v in os.environ.items() if k in ALLOWED_ENV} | {"HOME": home, "TMPDIR": home}
        try:
            proc = subprocess.run(
                [python, "-m", "torch.utils.collect_env"],
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
                check=False,
                env=env,
                cwd=home,
            )
        except subprocess.TimeoutExpired:
            return "(python -m torch.utils.collect_env did not finish in 300 s)"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"(python -m torch.utils.collect_env failed: {last})"
    return proc.stdout.strip()
