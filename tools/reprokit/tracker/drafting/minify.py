"""PyTorch's own minifier on a failing script, contained like every run of case code.

TORCHDYNAMO_REPRO_AFTER=aot minifies the graph after AOTAutograd: inductor compile failures (REPRO_LEVEL 2, torch's
default) and, with TORCHDYNAMO_REPRO_LEVEL=4, accuracy failures. The script's run writes minifier_launcher.py into a
debug folder; running the launcher writes the minified repro.py. Both are case code (the launcher is generated from
the case's graph, in a folder the case could write), so both run through run/execute.observe, and the files they
leave are read as untrusted (regular files only, links not followed, bounded)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.run.child_setup import write_readable_script
from reprokit.run.execute import Observation, observe
from reprokit.run.untrusted_files import UntrustedFile, read_untrusted

REPRO_CAP = 1 << 20
_BACKEND_FAILURES = ("BackendCompilerFailed", "InductorError", "LoweringException")


@dataclass(frozen=True)
class Minified:
    text: str | None  # the minified repro, when the minifier wrote one
    why: str  # what happened, in one sentence (why there is none)


def level_for(obs: Observation, stage: str | None, accuracy: bool) -> str | None:
    """TORCHDYNAMO_REPRO_LEVEL for this failure when the minifier applies to it, else None."""
    chain = [c.rsplit(".", 1)[-1] for p in obs.probes for c in p.get("chain", []) if isinstance(c, str)]
    if stage in ("inductor", "aot_autograd") and any(c in _BACKEND_FAILURES for c in chain):
        return "2"  # a failure while a backend compiles
    if accuracy or stage == "inductor":
        return "4"  # a wrong result, or an error when the compiled code runs: checked against eager
    return None


def _newest(folder: Path, name: str) -> Path | None:
    """The newest regular file called `name` under folder, walking without following links."""
    found = []
    for top, _, names in os.walk(folder, followlinks=False):
        for entry in names:
            path = Path(top) / entry
            info = os.lstat(path)
            if entry == name and stat.S_ISREG(info.st_mode):
                found.append((info.st_mtime, str(path)))
    return Path(max(found)[1]) if found else None


def run_minifier(
    script: Path,
    env_extra: dict[str, str],
    level: str,
    timeout: float,
    python: str,
    after: str = "aot",
    launcher_kwargs: dict | None = None,
) -> Minified:
    """Run the script under the minifier, then its launcher; the minified repro or why there is none."""
    debug = Path(tempfile.mkdtemp(prefix="reprokit-minify-"))
    debug.chmod(0o755)
    kwargs = launcher_kwargs or {}
    try:
        # The launcher writes the run's environment into itself, cache folders included: they go in the debug folder,
        # the one both contained runs may write (the first run's own folder is gone when the launcher runs).
        extra = {
            **env_extra,
            "TORCHDYNAMO_REPRO_AFTER": after,
            "TORCHDYNAMO_REPRO_LEVEL": level,
            "TORCH_COMPILE_DEBUG_DIR": str(debug),
            "TORCHINDUCTOR_CACHE_DIR": str(debug / "inductor"),
            "TRITON_CACHE_DIR": str(debug / "triton"),
        }
        first = observe(
            script, env=dict(os.environ), timeout=timeout, extra_env=extra, writable=(debug,), python=python, **kwargs
        )
        launcher = _newest(debug, "minifier_launcher.py")
        if launcher is None:
            said = first.status + (f", {first.exception}" if first.exception else "")
            return Minified(
                None,
                f"the minifier did not trigger after {after} (TORCHDYNAMO_REPRO_LEVEL={level}): the "
                f"run under it ended ({said}) without writing minifier_launcher.py",
            )
        ran = _run_launcher(launcher, debug, env_extra, timeout, python)
        found = _newest(launcher.parent, "repro.py")
        if found is None:
            said = f"{ran.status}" + (f", {ran.exception}" if ran.exception else "")
            return Minified(None, f"the minifier's launcher wrote no repro.py ({said})")
        try:
            data, size = read_untrusted(found, REPRO_CAP)
        except UntrustedFile as err:
            return Minified(None, f"the minifier's repro.py was not read ({err})")
        if size > REPRO_CAP:
            return Minified(None, f"the minifier's repro.py has {size} bytes, too large to quote")
        return Minified(data.decode("utf-8", "replace"), f"minified after {after} (level {level})")
    finally:
        shutil.rmtree(debug, ignore_errors=True)


def _run_launcher(launcher: Path, debug: Path, env_extra: dict[str, str], timeout: float, python: str) -> Observation:
    """The launcher, contained, run from its own folder: it writes the minified repro.py into the current folder."""
    with tempfile.TemporaryDirectory(prefix="reprokit-launcher-") as tmp:
        wrapper = write_readable_script(
            Path(tmp) / "run_launcher.py",
            f"import os, runpy\nos.chdir({str(launcher.parent)!r})\n"
            f"runpy.run_path({str(launcher)!r}, run_name='__main__')\n",
        )
        return observe(
            wrapper,
            env=dict(os.environ),
            timeout=timeout,
            writable=(debug,),
            python=python,
            extra_env={**env_extra, "TORCH_COMPILE_DEBUG_DIR": str(debug)},
        )


def minify(cd, stage: str | None, timeout: float = 900, python: str | None = None) -> Path:
    """`reprokit minify ID`: keep the minified repro beside the case as minified_repro.py (and MINIFIED.md)."""
    import sys

    after = "aot" if stage == "inductor" else "dynamo"
    found = run_minifier(cd.script("repro"), {}, "2", timeout, python or sys.executable, after)
    if found.text is None:
        raise InputError(f"{cd.case.id}: {found.why}")
    target = cd.path / "minified_repro.py"
    target.write_text(found.text, encoding="utf-8")
    (cd.path / "MINIFIED.md").write_text(
        f"`minified_repro.py` was written by PyTorch's minifier (TORCHDYNAMO_REPRO_AFTER={after}) from `repro.py`; it "
        f"minified the graph after {'AOTAutograd' if after == 'aot' else 'Dynamo'}. Regenerate with `nox -s minify -- "
        f"{cd.case.id}`.\n",
        encoding="utf-8",
    )
    return target


def minify_as_recorded(cd, loaded) -> Path:
    """`reprokit minify`: the stage the case's repro failed at in its recorded runs (the store's `loaded`) picks
    the minifier's level (dynamo or aot) with what the minifier's own run shows (level_for)."""
    stage = next((r.stage for r in loaded.records if r.case == cd.case.id and r.variant == "repro"), None)
    return minify(cd, stage)
