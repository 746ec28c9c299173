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


@pytest.fixture(scope="session")
def float64_case(tmp_path_factory):
    """One real `new-case --from float64_mean.py` and one `run` of that case (inductor compiles it in each: minutes on
    a busy 2-core machine), shared by the tests that check what each says of a script that fixes its own dtype.
    Returns (root, new-case's process, run's process); the tests only read them. Its tests carry
    xdist_group(support.FLOAT64_GROUP), so that one worker makes it once."""
    from support import empty_repository, run_reprokit

    root = empty_repository(tmp_path_factory.mktemp("float64-case"))
    made = run_reprokit(
        root,
        "new-case",
        "float-sixty-four",
        "--from",
        str(Path(__file__).parent / "fixtures" / "contrib" / "float64_mean.py"),
        "--link",
        "https://github.com/pytorch/pytorch/issues/2",
    )
    ran = run_reprokit(root, "run", "--host", "--target", "cpu", "--case", "float-sixty-four")
    return root, made, ran
