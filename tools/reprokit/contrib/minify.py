"""Run PyTorch's own minifier on a failing case and keep its minified repro beside the case.

TORCHDYNAMO_REPRO_AFTER=aot for failures inside inductor (minifies the AOT graph), =dynamo otherwise (the Dynamo FX
graph, any backend). The minifier writes minifier_launcher.py under the debug directory; running it writes the
minified repro.py. Nothing of the case is changed except the added minified_repro.py and MINIFIED.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from reprokit.model.corpus import CaseDir
from reprokit.model.schema import InputError
from reprokit.run.execute import observe


def minify(cd: CaseDir, stage: str | None, timeout: float = 900) -> Path:
    after = "aot" if stage == "inductor" else "dynamo"
    debug = Path(tempfile.mkdtemp(prefix="reprokit-minify-"))
    try:
        observe(cd.script("repro"), env=dict(os.environ), timeout=timeout,
                extra_env={"TORCHDYNAMO_REPRO_AFTER": after, "TORCH_COMPILE_DEBUG_DIR": str(debug)}, writable=(debug,))
        launchers = sorted(debug.rglob("minifier_launcher.py"))
        if not launchers:
            raise InputError(f"{cd.case.id}: the minifier did not trigger after {after} (the failure is not in a "
                             "compiler backend, e.g. Dynamo itself raised before any backend ran)")
        launcher = launchers[-1]
        proc = subprocess.run([sys.executable, str(launcher)], cwd=launcher.parent, capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "TORCH_COMPILE_DEBUG_DIR": str(debug)}, check=False)
        repros = sorted(launcher.parent.rglob("repro.py"), key=lambda p: p.stat().st_mtime)
        if not repros:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise InputError(f"{cd.case.id}: the minifier launcher wrote no repro.py ({last})")
        target = cd.path / "minified_repro.py"
        shutil.copyfile(repros[-1], target)
        (cd.path / "MINIFIED.md").write_text(
            f"`minified_repro.py` was written by PyTorch's minifier (TORCHDYNAMO_REPRO_AFTER={after}) from "
            f"`repro.py`; it minified the graph after {'AOTAutograd' if after == 'aot' else 'Dynamo'}. "
            "Regenerate with `nox -s minify -- " + cd.case.id + "`.\n", encoding="utf-8")
        return target
    finally:
        shutil.rmtree(debug, ignore_errors=True)
