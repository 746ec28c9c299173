"""Mutation testing of the verdict and gating core with mutmut (`nox -s mutation`); prints the score.

mutmut names mutants by module path from a src/ layout, so the run happens in a scratch copy of the repository
where tools/reprokit sits at src/reprokit; the fast tests of the core must kill every mutant they can see.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "model/verdict.py",
    "run/outcome.py",
    "store/expected.py",
    "store/views.py",
]  # what a verdict means, judging, the gate, views
TESTS = ["tests/test_core.py", "tests/test_outcome.py", "tests/test_judging.py"]
CONFIG = f"""
[tool.mutmut]
source_paths = ["src/reprokit/"]
only_mutate = {json.dumps([f"src/reprokit/{name}" for name in CORE])}
pytest_add_cli_args_test_selection = {json.dumps(TESTS)}
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]
"""


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="reprokit-mutation-") as tmp:
        work = Path(tmp)
        shutil.copytree(
            ROOT / "tools" / "reprokit", work / "src" / "reprokit", ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + CONFIG)
        run = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", *sys.argv[1:]], cwd=work, check=False, stdout=subprocess.DEVNULL
        )
        subprocess.run(
            [sys.executable, "-m", "mutmut", "export-cicd-stats"], cwd=work, check=False, stdout=subprocess.DEVNULL
        )
        stats_file = work / "mutants" / "mutmut-cicd-stats.json"
        if run.returncode != 0 or not stats_file.exists():
            print(f"mutmut failed (exit {run.returncode})")
            return 1
        stats = json.loads(stats_file.read_text())
        survivors = subprocess.run(
            [sys.executable, "-m", "mutmut", "results"], cwd=work, capture_output=True, text=True, check=False
        ).stdout
    killed, survived = stats.get("killed", 0), stats.get("survived", 0)
    others = {k: v for k, v in stats.items() if k not in ("killed", "survived", "total") and v}
    total = killed + survived
    print(
        f"mutation score of {', '.join(CORE)} against {', '.join(TESTS)}: {killed}/{total} killed "
        f"({killed / total:.1%}), {survived} survived" + (f"; other outcomes {others}" if others else "")
    )
    if survivors.strip():
        print("survivors (mutmut show NAME in a copy prepared like this one shows each diff):")
        print(survivors.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
