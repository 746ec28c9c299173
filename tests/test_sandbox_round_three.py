"""Sandbox, round three: each attack of the third audit, written here as a real case script (or a real input file)
and run by the real runner or command. Each test asserts that the attack ran and that its effect is absent."""
import os
import signal
from pathlib import Path

import pytest
from reprokit.run.execute import observe

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and the uid drop need a root runner")


def case_script(tmp_path: Path, source: str, name: str = "repro.py") -> Path:
    folder = tmp_path / "case"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    path = folder / name
    path.write_text(source)
    path.chmod(0o644)
    return path


def run(path: Path, timeout: float = 60, **extra):
    return observe(path, env=dict(os.environ), extra_env=extra, timeout=timeout)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV])
def test_a_case_that_kills_itself_is_recorded_as_killed_by_that_signal(tmp_path, sig):
    obs = run(case_script(tmp_path, f"import os\nprint('KILLING', flush=True)\nos.kill(os.getpid(), {int(sig)})\n"))
    assert "KILLING" in obs.stdout_tail  # the attack ran
    assert (obs.status, obs.signal, obs.exit_code) == ("crash", sig.name, -int(sig)), obs.stderr_tail
    assert "Traceback" not in obs.stderr_tail  # the keeper relayed the signal, it did not die of an exception
