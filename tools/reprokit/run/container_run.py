"""A run in the target's image: the image is built (or reused), the runner inside it gets the whole request as JSON
and records into the store, mounted; what it recorded is read back."""

from __future__ import annotations

from pathlib import Path

from reprokit.images import container, dockerfiles
from reprokit.model.matrix import Target
from reprokit.model.schema import InputError
from reprokit.run import environment
from reprokit.run.request import Ran, RunOutcome, RunRequest
from reprokit.store import import_checks
from reprokit.store.store import Store


def run_in_container(req: RunRequest, target: Target, log) -> Ran:
    if req.cache:
        raise InputError("--cache keeps caches on this machine: use it with --host")
    if req.python is not None:
        raise InputError("--python names an interpreter on this machine: use it with --host")
    if req.torch:
        raise InputError(
            "--torch builds an environment on this machine: use it with --host (the image holds the "
            "target's pinned torch)"
        )
    tag = dockerfiles.build(
        req.root / "images",
        req.target,
        target,
        req.base_image,
        req.wheelhouse.resolve() if req.wheelhouse else None,
        req.base_python,
        log,
    ).tag
    log(
        f"{req.target}: running in {tag} (no network, non-root, repository read-only, memory limit "
        f"{container.memory_limit(req.jobs)})"
    )
    inside = req.model_copy(
        update={
            "root": Path(container.REPO),
            "out": Path(container.OUT),
            "where": "host",
            "render": False,
            "update_expected": False,
            "wheelhouse": None,
            "base_image": None,
            "base_python": None,
        }
    )
    code = container.run(tag, req.root, req.store_dir, req.target, target, inside.model_dump_json(), req.jobs, log)
    store = Store(req.store_dir)
    loaded = store.load(req.target, req.suite)
    headers = sorted(
        (h for h in loaded.runs.values() if h.mode == "host" and h.suite == req.suite), key=lambda h: h.finished
    )
    if code not in (0, 1) or not headers:
        raise InputError(f"{req.target}: the container exited {code} without recording a run in {req.store_dir}")
    latest = headers[-1]
    outcome = RunOutcome(
        records=[r for r in loaded.records if r.run_id == latest.run_id],
        interrupted=code == 130,
        not_started=latest.not_started,
    )
    # signed here, outside the container, with this runner's key (the runner inside shares the case's uid: see
    # docs/threat-model.md, "import takes no record on trust", for what that signature vouches for)
    import_checks.sign(store.folder, outcome.records)
    return Ran(outcome, loaded, outcome.records, environment.hardware_mismatch(req.target, target, latest.environment))
