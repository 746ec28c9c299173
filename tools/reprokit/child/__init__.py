"""What runs inside the case's process: the probe that observes a script, its containment, the warm zygote.

These files run as scripts in the interpreter under test: the standard library (and torch) only, never the rest of
the package (the `child` contract in pyproject.toml's import-linter layers keeps it so). The runner names them by
path.
"""

from pathlib import Path

FOLDER = Path(__file__).parent
PROBE = FOLDER / "probe.py"
LANDLOCK = FOLDER / "landlock.py"  # loaded by the probe from its own folder
STAGES = FOLDER / "stages.py"  # likewise
CONTAIN = FOLDER / "contain.py"
ZYGOTE = FOLDER / "zygote.py"
EXCEPTION_NAMES = FOLDER / "exception_names.py"
