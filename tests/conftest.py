import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # the package under test, also when it is not installed
SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


@pytest.fixture
def script():
    return lambda name: SCRIPTS / name

