import ctypes
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # the package under test, also when it is not installed
SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


@pytest.fixture
def script():
    return lambda name: SCRIPTS / name


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (< 1: none), asked the way probe.py asks."""
    from reprokit.probe import _LANDLOCK_CREATE
    return ctypes.CDLL(None, use_errno=True).syscall(_LANDLOCK_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
