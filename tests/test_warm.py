"""Warm-interpreter mode gives the same observations as cold runs, with the same isolation."""
import os
import time

import pytest
from reprokit.execute import observe
from reprokit.warm import WarmPool

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def pool():
    warm = WarmPool()
    yield warm
    warm.close()


@pytest.mark.parametrize("name, timeout", [("raises.py", 60), ("passes.py", 60), ("segfault.py", 60),
                                           ("abort.py", 60), ("hang.py", 2), ("memory_hog.py", 60)])
def test_warm_and_cold_observe_the_same(pool, script, name, timeout):
    cold = observe(script(name), env=dict(os.environ), extra_env={}, timeout=timeout)
    warm = pool.observe(script(name), env=dict(os.environ), extra_env={}, timeout=timeout)
    assert (warm.status, warm.signal, warm.exception, warm.stage) == (cold.status, cold.signal, cold.exception,
                                                                      cold.stage)


def test_warm_runs_keep_secrets_out_and_kill_stray_children(pool, script):
    out = pool.observe(script("show_env.py"), env={**os.environ, "AWS_SECRET_ACCESS_KEY": "x"}, extra_env={},
                       timeout=60).stdout_tail
    assert "SECRET=<unset>" in out
    orphan = pool.observe(script("orphan.py"), env=dict(os.environ), extra_env={}, timeout=60)
    pid = int(orphan.stdout_tail.split("CHILD=")[1].split()[0])
    time.sleep(0.2)
    try:
        with open(f"/proc/{pid}/stat") as fh:
            assert fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        pass
