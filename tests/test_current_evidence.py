"""What the published figures rest on: current records that say which case content ran, runs that tested what their
claim is about, failures that are torch's own, and machine dependence known per release (the audit of the ledger's
41 claims). Every test reads the repository's own store, cases and claims.yaml."""

from pathlib import Path

import pytest
from reprokit.model.attribution import COMPILE_STAGES, compile_rate, outside_compile
from reprokit.model.case import load_case
from reprokit.model.claims import load_claims
from reprokit.model.corpus import discover
from reprokit.publish.pages import ledger
from reprokit.run.execute import Observation
from reprokit.run.outcome import repro_verdict
from reprokit.run.request import load_root_matrix
from reprokit.store.machines import machine_dependent
from reprokit.store.store import Store
from reprokit.store.views import current, current_identities, releases, superseded
from support import record

ROOT = Path(__file__).resolve().parents[1]
NOT_BUGS = (
    "export-cat-plus-strided-slice",
    "export-interpolate-shared-dim",
    "custom-op-fake-signature-mismatch-accepted",
)


@pytest.fixture(scope="module")
def store():
    return Store(ROOT / "results").load(outputs=False)


@pytest.fixture(scope="module")
def corpus():
    return {cd.case.id: cd for cd in discover(ROOT / "cases")}


def views(loaded):
    matrix = load_root_matrix(ROOT)
    return {t: current(loaded, t, "cases", matrix.targets[t].pins.torch) for t in ("cpu", "h100")}


def test_no_current_record_lacks_a_hash(store):
    """Walk the store: a record without a case hash (made before hashes were kept) is history, never current."""
    hashless = [r for r in store.records if not r.case_hash]
    assert hashless, "the store keeps its hashless records as history"
    current_ids = current_identities(store)
    assert current_ids
    assert not [r.identity for r in store.records if r.identity in current_ids and not r.case_hash]
    assert all(superseded(r, store.content) for r in hashless)


def test_a_hashless_record_counts_only_where_no_corpus_is_known():
    """An --out store (no corpus beside it) knows no content: there a record without a hash still counts."""
    rec = record(case="c", case_hash=None)
    assert not superseded(rec, {})
    assert superseded(rec, {"c": "0123456789abcdef"})
    assert superseded(rec, {"other": "0123456789abcdef"})  # a hashless sweep cell: no case folder, still unknown


@pytest.mark.parametrize("claim_id", ["allreduce-forward", "ddp-order"])
def test_graph_claims_are_judged_on_runs_that_compiled_a_graph(store, corpus, claim_id):
    claims = {c.id: c for c in load_claims(ROOT / "claims.yaml", set(corpus)).claims}
    claim = claims[claim_id]
    assert claim.compiles_graph
    shown = views(store)
    verdict, detail = ledger.judge(claim, corpus, shown["h100"].records, target="h100")
    # on h100 no current, hashed run of the 2-GPU DDP cases compiled a graph (one GPU lent: they skip)
    ran = [r for r in shown["h100"].records if r.case in claim.cases and r.verdict.ran]
    if not any(ledger.compiled_a_graph(r) for r in ran):
        assert verdict == ledger.NOT_RUN and detail.startswith("not tested on h100"), detail
    # a run that compiled no graph never decides the claim, whatever its verdict
    graphless = record(
        case=claim.cases[0],
        verdict="does-not-reproduce",
        case_hash="0" * 16,
        dynamo={"unique_graphs": 0, "graph_breaks": 0, "recompiles": 0, "graph_break_reasons": []},
    )
    assert ledger.judge(claim, corpus, [graphless], target="h100")[0] == ledger.NOT_RUN
    one_graph = graphless.model_copy(update={"dynamo": {**graphless.dynamo, "unique_graphs": 1}})
    assert ledger.judge(claim, corpus, [one_graph], target="h100")[0] == ledger.REFUTED


def test_fsdp_order_oracle_is_the_claimed_failure(store):
    """cpu torch 2.8.0: the compile-first script failed its own training check (AssertionError), as the shard-first
    fix did: under the claimed message's oracle that is another failure, not the claim confirmed."""
    case = load_case(ROOT / "cases" / "fsdp-shard-compile-order" / "case.yaml")
    assert "Param not managed by FSDP" in (case.expect.repro.match or "")
    old = next(
        r
        for r in store.records
        if r.case == "fsdp-shard-compile-order"
        and r.variant == "repro"
        and r.torch.startswith("2.8.0")
        and r.exception == "AssertionError"
    )
    obs = Observation(
        status=old.status,
        exit_code=old.exit_code,
        signal=None,
        seconds=old.seconds,
        exception=old.exception,
        message=old.message,
        stage=old.stage,
    )
    verdict, _ = repro_verdict(case.expect.repro, obs)
    assert str(verdict) == "fails-differently"
    claimed = Observation(
        status="fail",
        exit_code=1,
        signal=None,
        seconds=1.0,
        exception="RuntimeError",
        message="Param not managed by FSDP: a.weight",
    )
    assert str(repro_verdict(case.expect.repro, claimed)[0]) == "reproduces"


def test_counted_non_bugs_leave_the_compile_rate(store, corpus):
    by_id = {i: cd.case for i, cd in corpus.items()}
    for case_id in NOT_BUGS:
        assert outside_compile(by_id[case_id]), case_id
    for target, view in views(store).items():
        mine = [r for r in view.records if r.case in NOT_BUGS and r.variant == "repro" and r.verdict.ran]
        assert mine, target
        hit, ran = compile_rate(view.records, by_id)
        hit_all, ran_all = compile_rate(view.records, {**by_id, **{c: None for c in NOT_BUGS}})
        assert ran == ran_all  # they still ran: the denominator keeps them
        assert hit_all - hit == sum(str(r.verdict) == "reproduces" and r.stage in COMPILE_STAGES for r in mine) > 0


def test_two_builds_of_a_release_on_two_machines_are_machine_dependent(store):
    """2.13.0+cpu on an Intel Xeon and 2.13.0+cu130 on an AMD EPYC disagree on the same case content: one release,
    machine-dependent, out of the rates (not two builds' verdicts)."""
    shown = {r.key: r for r in releases(store, "cpu", "cases")["2.13.0"]}
    rec = shown["inductor-cpu-arctan-linalg-cond/repro@float32"]
    assert rec.machine_dependent, rec.on_other_machines
    assert "inductor-cpu-arctan-linalg-cond/repro@float32" in machine_dependent(store.records, store.runs)


def test_the_ledger_shows_41_claims_none_on_a_retired_record(store, corpus):
    claims = load_claims(ROOT / "claims.yaml", set(corpus)).claims
    assert len(claims) == 41
    current_ids = current_identities(store)
    for view in views(store).values():
        for claim in claims:
            used = [r for r in view.records if r.case in claim.cases]
            assert all(r.identity in current_ids and r.case_hash for r in used), claim.id
    matrix = load_root_matrix(ROOT)
    for target in ("cpu", "h100"):  # the rate claims' sweep: its cells without a hash are history too
        sweep = current(store, target, "sweep", matrix.targets[target].pins.torch)
        assert sweep is None or all(r.case_hash and r.identity in current_ids for r in sweep.records), target


def test_a_sweep_cut_short_refutes_no_claimed_rate(corpus):
    """The cells a run left unstarted could only raise a structure rate: below the claim on part of the grid is
    inconclusive, on the whole grid refuted."""
    from reprokit.model.records import RunHeader, Sitting
    from reprokit.store.store import Loaded
    from reprokit.store.views import view_of

    claim = next(c for c in load_claims(ROOT / "claims.yaml", set(corpus)).claims if c.id == "headline-63")
    cells = [
        record(
            case=f"sweep-m{i}",
            suite="sweep",
            run_id="cut",
            variant="inference-default",
            verdict="does-not-reproduce",
            case_hash="0" * 16,
        )
        for i in range(3)
    ]

    def judged(planned, not_started, records):
        head = RunHeader(
            run_id="cut",
            target="cpu",
            suite="sweep",
            torch="2.13.0+cpu",
            device="cpu",
            environment={},
            planned=planned,
            not_started=not_started,
            reprokit="test",
            sittings=[Sitting(jobs=2, started="2026-12-01T00:00:00Z", finished="2026-12-01T00:00:00Z")],
        )
        sweep = view_of(Loaded(records, {"cut": head}), "cpu", "sweep", "2.13.0")
        return ledger.judge(claim, corpus, [], sweep, target="cpu")

    verdict, detail = judged(4, 1, cells)
    assert verdict == ledger.INCONCLUSIVE and "1 cells of the grid not recorded" in detail, detail
    whole = [
        *cells,
        record(
            case="sweep-m3",
            suite="sweep",
            run_id="cut",
            variant="inference-default",
            verdict="does-not-reproduce",
            case_hash="0" * 16,
        ),
    ]
    assert judged(4, 0, whole)[0] == ledger.PARTLY_TESTED  # refuted on the whole grid (the claim has untested parts)


def test_an_fp8_rate_on_a_grid_recorded_over_resumed_runs_is_judged_whole(corpus):
    """The grid recorded in three calls, each resuming the last (the first planned every cell and started few): the
    FP8 cells are all recorded, so the FP8 rate decides, never 'cells of the grid not recorded' (a plan counts every
    dtype's cells, the FP8 records only FP8's)."""
    from reprokit.model.claims import load_claims
    from reprokit.model.records import RunHeader, Sitting
    from reprokit.store.store import Loaded
    from reprokit.store.views import view_of

    claim = next(c for c in load_claims(ROOT / "claims.yaml", set(corpus)).claims if c.id == "fp8-89")
    cells = [
        record(
            case=f"sweep-m{i}",
            suite="sweep",
            run_id=f"call-{i}",
            target="h100",
            torch="2.11.0+cu130",
            variant="train-default-tensorwise" if i % 2 else "inference-default",
            dtype="float8_e4m3fn" if i % 2 else "float32",
            verdict="does-not-reproduce",
            case_hash="0" * 16,
        )
        for i in range(4)
    ]
    heads = {
        f"call-{i}": RunHeader(
            run_id=f"call-{i}",
            target="h100",
            suite="sweep",
            torch="2.11.0+cu130",
            device="NVIDIA H100 80GB HBM3",
            environment={},
            planned=4 - i,
            not_started=3 - i,
            reprokit="test",
            sittings=[Sitting(jobs=2, started=f"2026-12-0{i + 1}T00:00:00Z", finished=f"2026-12-0{i + 1}T00:00:00Z")],
        )
        for i in range(4)
    }
    sweep = view_of(Loaded(cells, heads), "h100", "sweep", "2.11.0")
    verdict, detail = ledger.judge(claim, corpus, [], sweep, target="h100")
    assert "not recorded" not in detail and verdict == ledger.PARTLY_TESTED, (verdict, detail)
    assert "0.0% (0/2)" in detail, detail
    verdict, detail = ledger.judge(claim, corpus, [], view_of(Loaded(cells[:3], heads), "h100", "sweep", "2.11.0"))
    assert verdict == ledger.INCONCLUSIVE and "1 cells of the grid not recorded" in detail, detail
