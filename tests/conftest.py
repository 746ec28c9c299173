import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # the package under test, also when it is not installed
SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


@pytest.fixture
def script():
    return lambda name: SCRIPTS / name


# pytest puts the running test's id in PYTEST_CURRENT_TEST, which every child process inherits; Linux refuses to start
# a program with one variable over 128 KiB ("Argument list too long"), so a parameter's value never becomes its id
# beyond a few KiB: give such parameters ids.
LONGEST_TEST_ID = 4096


def pytest_collection_modifyitems(config, items):
    if too_long := [item.nodeid[:120] for item in items if len(item.nodeid) > LONGEST_TEST_ID]:
        raise pytest.UsageError(f"test ids over {LONGEST_TEST_ID} characters (give their parameters ids): {too_long}")
