"""Warm-interpreter mode gives the same observations as cold runs, with the same isolation."""

import os
import time

import pytest
from reprokit.run.execute import observe
from reprokit.run.warm import WarmPool
from test_execute import with_mark

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        os.geteuid() == 0, reason="warm runs as root are never started (no sandbox): test_sandbox_round_five checks it"
    ),
]


@pytest.fixture(scope="module")
def pool():
    warm = WarmPool()
    yield warm
    warm.close()


@pytest.mark.parametrize(
    "name, timeout",
    [
        ("raises.py", 60),
        ("passes.py", 60),
        ("segfault.py", 60),
        ("abort.py", 60),
        ("hang.py", 2),
        ("memory_hog.py", 60),
    ],
)
def test_warm_and_cold_observe_the_same(pool, script, name, timeout):
    cold = observe(script(name), env=dict(os.environ), extra_env={}, timeout=timeout)
    warm = pool.observe(script(name), env=dict(os.environ), extra_env={}, timeout=timeout)
    assert (warm.status, warm.signal, warm.exception, warm.stage) == (
        cold.status,
        cold.signal,
        cold.exception,
        cold.stage,
    )


def test_warm_runs_keep_secrets_out_and_kill_stray_children(pool, script):
    out = pool.observe(
        script("show_env.py"), env={**os.environ, "AWS_SECRET_ACCESS_KEY": "x"}, extra_env={}, timeout=60
    ).stdout_tail
    assert "SECRET=<unset>" in out
    orphan = pool.observe(script("orphan.py"), env=dict(os.environ), extra_env={}, timeout=60)
    mark = orphan.stdout_tail.split("CHILD=")[1].split()[0]
    time.sleep(0.2)
    assert with_mark(mark) == []


def test_warm_runs_import_nothing_of_the_case_folder_before_confinement(pool, script, tmp_path):
    outside = tmp_path / "outside.txt"
    obs = pool.observe(
        script("shadows_stdlib/repro.py"), env=dict(os.environ), timeout=60, extra_env={"REPRO_OUTSIDE": str(outside)}
    )
    assert not outside.exists()
    assert obs.stdout_tail.strip() == f"PATH0={script('shadows_stdlib/repro.py').parent}"


def test_warm_runs_cannot_forge_reports_or_hang_the_runner_with_a_fifo(pool, script):
    forged = pool.observe(script("forges_verdict.py"), env=dict(os.environ), extra_env={}, timeout=60)
    assert (forged.status, forged.exception) == ("pass", None)
    start = time.monotonic()
    fifo = pool.observe(script("fifo_output.py"), env=dict(os.environ), extra_env={}, timeout=30)
    assert fifo.status == "pass" and "REPLACED" not in fifo.stdout_tail and time.monotonic() - start < 20
    tampered = pool.observe(script("tampers_report.py"), env=dict(os.environ), extra_env={}, timeout=60)
    assert "TAMPERED" not in tampered.stdout_tail and (tampered.status, tampered.malformed) == ("pass", None)
