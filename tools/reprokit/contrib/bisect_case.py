"""Bisect one case of one target over torch releases: the store answers first, each missing release runs through
the lifecycle in its own environment (recorded in the store like any run); the search itself is bisection.py's."""

from __future__ import annotations

from reprokit.contrib import bisection, bisection_answer


def bisect_case(
    req_base, case_id: str, versions: list[str], log=print, max_envs: int | None = None
) -> bisection.Bisection:
    """Bisect one case of one target over `versions`: the store answers first; each missing release runs through
    the lifecycle (its own environment, recorded in the store like any run)."""
    from reprokit.model import case_identity, corpus
    from reprokit.run import lifecycle, request, torch_envs
    from reprokit.store.store import Store
    from reprokit.store.views import release_of, releases

    matrix = request.load_root_matrix(req_base.root)
    target = request.target_of(matrix, req_base.target)
    (case_dir,) = corpus.select(corpus.discover(req_base.root / "cases"), [case_id])
    dtype = next((d for d in case_dir.case.requires.dtypes if corpus.runs_in(target, d, case_dir.own_dtype)), None)
    if dtype is None:
        from reprokit.model.schema import InputError

        raise InputError(f"cases/{case_id}/case.yaml: requires.dtypes: none is tested on {req_base.target}")
    key = f"{case_id}/repro@{dtype}"
    content = case_identity.content_hash(case_dir.path)
    recorded = {}
    for release, records in releases(
        Store(req_base.store_dir).load(req_base.target, "cases"), req_base.target, "cases"
    ).items():
        rec = next((r for r in records if r.key == key and r.case_hash in (None, content)), None)
        if rec is not None:
            recorded.update(
                {
                    v: bisection_answer.Seen(rec.verdict, rec.why, rec.seconds)
                    for v in versions
                    if release_of(v) == release
                }
            )

    most = bisection.most_runs(len(versions))  # the newest release, then a binary search, when every run decides
    runs_made = [0]

    def run(version: str) -> bisection_answer.Seen | None:
        runs_made[0] += 1
        left = max(most - len(recorded) - runs_made[0], 0)
        log(
            f"bisect: running {key} on torch {version} (run {runs_made[0]}; at most {left} more when every run "
            "decides)" + ("" if torch_envs.built(version) else "; its environment is built first")
        )
        # the inner run's gate and summary speak of one release against the pin: the search's answer says it all
        outcome = lifecycle.run(
            req_base.model_copy(update={"torch": version, "cases": [case_id]}), log=log, summary=False, gate_lines=False
        )
        if outcome.interrupted:  # Ctrl-C or SIGTERM: the search stops with what it has, it never goes on
            raise bisection.BisectionInterrupted(version)
        found = [r for r in outcome.records if r.key == key]
        return bisection_answer.Seen(found[0].verdict, found[0].why, found[0].seconds) if found else None

    to_build = [v for v in versions if v not in recorded and not torch_envs.built(v)]
    log(
        f"bisect: {len(versions)} releases, {len(recorded)} answered by the store: at most "
        f"{max(most - len(recorded), 0)} runs when every run decides"
    )
    if len(to_build) > 2:
        bound = min(len(to_build), most)
        cap = (
            f"--max-envs {max_envs} caps them at {max_envs}, after the built releases narrow the range"
            if max_envs is not None
            else "--max-envs N caps them (the built releases then narrow the range first)"
        )
        log(
            f"bisect: {len(to_build)} of the {len(versions)} releases have no environment here "
            f"({', '.join(to_build)}); when every run decides the search builds at most {bound} of them: "
            f"{torch_envs.estimate(bound)}; it stops after two releases undecided for the same reason, and {cap}"
        )
    found = bisection.search(versions, recorded, run, needs_build=lambda v: not torch_envs.built(v), max_envs=max_envs)
    found.timeout = req_base.timeout or case_dir.case.requires.timeout
    return found
