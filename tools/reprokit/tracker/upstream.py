"""`reprokit upstream ID`: what the PyTorch issue tracker should hear about a case.

A case that links a pytorch/pytorch issue gets the comment that issue needs (linked.py: "still reproduces" on a
closed one, "no longer reproduces" on an open one), its evidence from a contained run of the standalone repro made
now. Any other case gets a new-issue report in the fields of PyTorch's torch.compile form (upstream_new_issue.py).
Only the release history comes from the results store.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.model.corpus import CaseDir
from reprokit.model.matrix import Matrix
from reprokit.model.records import RunStatus
from reprokit.model.schema import InputError
from reprokit.run import torch_envs
from reprokit.store.views import repro_history
from reprokit.tracker import linked, offline_triage, triage_request
from reprokit.tracker.drafting import report_facts
from reprokit.tracker.drafting.issue_comment import NO_LONGER, STILL, CommentEvidence
from reprokit.tracker.judging import upstream_runs
from reprokit.tracker.text.release_summary import BAD, ReleaseHistory
from reprokit.tracker.text.user_paths import as_user_sees
from reprokit.tracker.upstream_new_issue import Filed, new_issue, torch_version


def setting_for(cd: CaseDir, device_kind: str, dtype: str, python: str = sys.executable) -> upstream_runs.Setting:
    req = cd.case.requires
    return upstream_runs.Setting(python, device_kind, dtype, req.timeout, req.launcher, req.world_size)


def linked_comment(item: linked.Linked, setting: upstream_runs.Setting, out: Path, force: bool = False) -> Filed:
    """The comment a linked issue needs, its evidence from a contained run of the standalone repro made now."""
    kind = item.kind
    if item.held and not force:
        raise InputError(
            f"cases/{item.cd.case.id}: links {item.url}: {item.held} (--force writes what the case's runs show anyway)"
        )
    if kind is None:
        newest = {t: h.decisive()[-1] for t, h in item.histories.items() if h.decisive()}
        if not force or not newest:
            raise InputError(
                f"cases/{item.cd.case.id}: links {item.url} ({item.state}, checked {item.checked}) and "
                "the recorded runs agree with that state: nothing to comment (--force writes what they "
                "show anyway)"
            )
        kind = STILL if any(v == BAD for _, v in newest.values()) else NO_LONGER
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-upstream-"))
    try:
        script = upstream_runs.write_standalone(case_files.read_text(item.cd.path, "repro.py"), setting, workdir)
        text = script.read_text(encoding="utf-8")
        plain = upstream_runs.contained(setting, script)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    versions = upstream_runs.collect_env(setting.python)
    ran = (
        f"Run now on torch {torch_version(versions)} ({setting.device}), contained as the corpus runs its cases: "
        f"{upstream_runs.summary(plain)}."
    )
    ours = (item.cd.path.resolve(), item.cd.path.resolve().parent.parent, torch_envs.cache_root())
    evidence = CommentEvidence(
        kind, item.histories, text, ran, as_user_sees(plain.stderr_tail, script, ours), versions, item.triage
    )
    path, command = linked.write(item, evidence, out)
    notes = (
        []
        if plain.status != RunStatus.PASS
        else [
            f"note: the repro exits 0 here now, while the store's newest "
            f"record says otherwise; check before posting ({path})"
        ]
    )
    return Filed(report=path, attachments=[], commands=[(f"post it on {item.url}:", command)], notes=notes)


def draft(
    root: Path,
    store_dir: Path,
    matrix: Matrix,
    case_id: str,
    target: str,
    out: Path,
    *,
    force: bool = False,
    tlparse: str | None = None,
    python: str = sys.executable,
    search_json: Path | None = None,
    issues_json: Path | None = None,
) -> Filed:
    """`reprokit upstream ID`: the comment a linked issue needs, else a new-issue report (screened first). With
    `issues_json`, a linked issue not yet triaged is triaged first from its file there, on this torch."""
    data = linked.Corpus.read(root, store_dir, matrix)
    if issues_json is not None:
        if target not in matrix.targets:
            raise InputError(f"--target {target!r}: no such target in matrix.yaml")
        data = offline_triage.with_triages(
            data,
            issues_json,
            triage_request.Request(target=target, here=True),
            out,
            log=lambda line: print(line, file=sys.stderr),
            case_id=case_id,
        )
    cd = next((c for c in data.cases if c.case.id == case_id), None)
    if cd is None:
        raise InputError(f"{case_id!r}: no such case (see `reprokit list`)")
    for name in ("repro.py", *case_files.EXTRA_FILES):  # before anything runs: a planted link stops here
        if why := case_files.problem(cd.path, name):
            raise InputError(why)
    if target not in matrix.targets:
        raise InputError(f"--target {target!r}: no such target in matrix.yaml")
    dtypes = [d for d in cd.case.requires.dtypes if d in matrix.targets[target].dtypes]
    if not dtypes:
        raise InputError(f"cases/{case_id}/case.yaml: requires.dtypes: none of them is tested on {target}")
    dtype, history = repro_history(data.loaded[target], target, case_id, dtypes)
    setting = setting_for(cd, matrix.targets[target].device.kind, dtype, python)
    item = next((i for i in linked.linked(data) if i.cd.case.id == case_id), None)
    if item is not None:
        return linked_comment(item, setting, out, force)
    errors = report_facts.errors_by_release(data.loaded[target], target, case_id, dtype)
    return new_issue(
        cd,
        target,
        setting,
        ReleaseHistory.of(history, errors),
        out,
        force=force,
        tlparse=tlparse,
        search_json=search_json,
    )
