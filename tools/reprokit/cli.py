"""The `reprokit` command line. Each sub-command is a thin layer over one module; nox sessions call these."""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from . import (
    __version__,
    autofix,
    container,
    corpus,
    environment,
    images,
    minify,
    new_case,
    report,
    results,
    sweep,
    sweep_report,
    upstream,
    validate,
)
from .outcome import compare
from .scheduler import RunOptions, run_all
from .schema import CATEGORIES, InputError, Matrix, load_claims, load_matrix
from .warm import WarmPool


def _root(args: argparse.Namespace) -> Path:
    root = Path(args.root).resolve()
    if not (root / "matrix.yaml").exists():
        raise InputError(f"{root}: no matrix.yaml here (run from the repository root or pass --root)")
    return root


def _target(matrix: Matrix, name: str):
    if name not in matrix.targets:
        raise InputError(f"--target {name!r}: unknown target; matrix.yaml has {', '.join(matrix.targets)}")
    return matrix.targets[name]


def _out(args: argparse.Namespace, root: Path) -> Path:
    return Path(args.out).resolve() if args.out else root / "reports"


def _progress(total: int):
    """A callback printing one line per finished run (rich's live bar on a terminal)."""
    done = [0]
    if sys.stderr.isatty():
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("running", total=total)

        def tick(rec):
            done[0] += 1
            bar.console.print(f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s)")
            bar.advance(task)
            if done[0] == total:
                bar.stop()
        return tick

    def line(rec):
        done[0] += 1
        print(f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s) {rec.why}", flush=True)
    return line


def render_all(root: Path, out: Path, matrix: Matrix) -> list[Path]:
    found = {name: results.load(results.results_path(out, name)) for name in matrix.targets
             if results.results_path(out, name).exists()}
    cases = corpus.discover(root / "cases")
    claims_file = root / "claims.yaml"
    claims = load_claims(claims_file, {c.case.id for c in cases}) if claims_file.exists() else None
    descriptions = {n: t.description for n, t in matrix.targets.items()}
    sweeps = {name: results.load(results.results_path(out, name, "sweep")) for name in matrix.targets
              if results.results_path(out, name, "sweep").exists()}
    written = sweep_report.write_reports(out, sweeps, descriptions)
    return report.write_reports(out, found, cases, descriptions, claims, sweeps) + written


def cmd_run(args: argparse.Namespace) -> int:
    root = _root(args)
    matrix = load_matrix(root / "matrix.yaml")
    target = _target(matrix, args.target)
    if args.container or (not args.host and container.docker_running()):
        if args.cache:
            raise InputError("--cache keeps caches on this machine: use it with --host")
        return _run_in_container(args, root, matrix, target)
    if not args.host:
        print("Docker is not running here: running in this Python environment (--host)", flush=True)
    out = _out(args, root)
    if args.cache:
        Path(args.cache).mkdir(parents=True, exist_ok=True)
    suite = args.suite
    res_path = results.results_path(out, args.target, suite)
    journal_file = results.journal_path(out, args.target, suite)
    previous = results.load(res_path) if res_path.exists() and args.resume else None  # corrupt: one-line error
    existing = previous or _load_if_readable(res_path)
    resumed = results.load_journal(journal_file) if args.resume and journal_file.exists() else []
    facts = environment.collect(args.python)
    mismatch = environment.hardware_mismatch(args.target, target, facts)
    if mismatch and not args.force:
        raise InputError(f"{mismatch}; pass --force to run anyway")
    runs = corpus.shard(_plan(args, root, target, facts), args.shard)
    done = {r.key: r for r in (previous.records if previous else [])}
    done.update({r.key: r for r in resumed})
    todo = [r for r in runs if r.key not in done]
    # Longest first (by the last recorded time), so the tail of the run is short jobs.
    last = existing.by_key() if existing and not previous else {}
    todo.sort(key=lambda r: -(done.get(r.key) or last.get(r.key) or results.Record("", "", "", "", "", "")).seconds)
    print(f"{args.target}: {len(runs)} runs ({len(runs) - len(todo)} already recorded), {args.jobs} jobs, "
          f"on {environment.summary(facts)}", flush=True)

    if not args.resume and journal_file.exists():
        journal_file.unlink()
    journal = results.Journal(journal_file)
    started = time.monotonic()
    try:
        pool = WarmPool(args.python) if args.warm else None
        opts = RunOptions(device_kind=target.device.kind, jobs=args.jobs, timeout=args.timeout, python=args.python,
                          ladder=not args.no_ladder, deadline=started + args.deadline if args.deadline else None,
                          warm=pool, cache_dir=Path(args.cache).resolve() if args.cache else None)
        try:
            new = run_all(todo, args.target, opts, journal, _progress(len(todo)))
        finally:
            if pool is not None:
                pool.close()
    finally:
        journal.close()
    planned = {r.key for r in runs}
    records = [r for k, r in done.items() if k in planned] + new
    not_started = len(planned) - len(records)
    if not_started:
        print(f"{not_started} runs not started before the --deadline; continue with --resume")
    kept = _kept_records(existing, facts, planned, {r.case.id for r in _plan(args, root, target, facts, every=True)})
    run_info = {"suite": suite, "smoke": bool(args.smoke), "mode": "host", "jobs": args.jobs,
                "sittings": [*_previous_sittings(previous), args.jobs],
                "cache": f"warm ({args.cache})" if args.cache else "cold", "interpreter": "warm (forked from a zygote)" if args.warm else "cold", "reprokit": __version__,
                "wall_seconds": round(time.monotonic() - started + _previous_wall(previous, resumed), 1),
                "shard": args.shard, "resumed": bool(resumed), "not_started": not_started, "selection": args.case,
                "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    saved_env = facts
    if kept and args.case:
        # A selection added to a recorded run: the file keeps that run's header and environment, and says which
        # runs were added later, where (another machine of the same torch and device: e.g. fewer GPUs) and when.
        later = {"keys": sorted(r.key for r in records), "on": environment.summary(facts),
                 "device_count": facts.get("device_count"), "wall_seconds": run_info["wall_seconds"],
                 "finished": run_info["finished"]}
        run_info = {**existing.run, "added": [*existing.run.get("added", []), later]}
        saved_env = existing.environment
    if res_path.exists() and not args.resume and not args.case and not args.shard:
        # A complete new run: the last one becomes "previous", for the report's list of changes.
        os.replace(res_path, res_path.with_name(res_path.stem + ".previous.json"))
    results.save(res_path, results.ResultSet(args.target, run_info, saved_env, kept + records))
    journal_file.unlink(missing_ok=True)
    if not args.no_report:
        for path in render_all(root, out, matrix):
            print(f"wrote {path}")
    return _check_expected(root, args, {r.key: r.verdict for r in records})


def _passthrough(args: argparse.Namespace) -> list[str]:
    """The run options that mean the same inside the container."""
    out = [f"--case={c}" for c in args.case] + ["--jobs", str(args.jobs), "--suite", args.suite]
    for flag, value in (("--timeout", args.timeout), ("--shard", args.shard), ("--deadline", args.deadline)):
        if value is not None:
            out += [flag, str(value)]
    for flag, on in (("--resume", args.resume), ("--smoke", args.smoke), ("--force", args.force),
                     ("--no-ladder", args.no_ladder)):
        if on:
            out.append(flag)
    return out


def _run_in_container(args: argparse.Namespace, root: Path, matrix: Matrix, target) -> int:
    out = _out(args, root)
    tag = images.build(root / "images", args.target, target, args.base_image,
                       Path(args.wheelhouse).resolve() if args.wheelhouse else None)
    print(f"{args.target}: running in {tag} (no network, non-root, repository read-only)", flush=True)
    code = container.run(tag, root, out, args.target, target, _passthrough(args))
    recorded = results.results_path(out, args.target, args.suite)
    if not recorded.exists():
        raise InputError(f"{args.target}: the container exited {code} without writing {recorded}")
    for path in render_all(root, out, matrix):
        print(f"wrote {path}")
    observed = {r.key: r.verdict for r in results.load(recorded).records}
    return _check_expected(root, args, observed)


def _plan(args: argparse.Namespace, root: Path, target, facts: dict, every: bool = False) -> list:
    """The CaseRuns of the chosen suite (all of them with every=True, for deciding which old records to keep)."""
    globs = [] if every else args.case
    if args.suite == "sweep":
        runs = sweep.plan(root / "sweep", args.target, target, facts, smoke=args.smoke and not every)
        chosen = {c for c in {r.case.id for r in runs} if not globs or any(fnmatch.fnmatchcase(c, g) for g in globs)}
        if globs and not chosen:
            raise InputError(f"--case {globs[0]!r}: no sweep structure matches (ids are sweep-<model>)")
        return [r for r in runs if r.case.id in chosen]
    return corpus.plan(corpus.select(corpus.discover(root / "cases"), globs), args.target, target, facts)


def _previous_wall(previous: results.ResultSet | None, resumed: list) -> float:
    """Wall time already spent by the run being resumed (the journal's records, or the last results)."""
    if resumed:
        return 0.0  # a cut-off run's wall time died with it; run["resumed"] says the figure is partial
    return float(previous.run.get("wall_seconds", 0)) if previous else 0.0


def _previous_sittings(previous: results.ResultSet | None) -> list[int]:
    """The --jobs of each earlier sitting of a run continued with --resume (the report says a run was split)."""
    if previous is None:
        return []
    return list(previous.run.get("sittings") or [previous.run.get("jobs")])


def _load_if_readable(path: Path) -> results.ResultSet | None:
    """The last results, when there are readable ones; a fresh run replaces an unreadable file at its end."""
    try:
        return results.load(path) if path.exists() else None
    except InputError:
        return None


def _kept_records(old: results.ResultSet | None, facts: dict, planned: set[str], case_ids: set[str]) -> list:
    """Records of runs outside this selection, kept only if they come from the same torch and device."""
    if old is None:
        return []
    same = all(old.environment.get(k) == facts.get(k) for k in ("torch", "device_name", "cuda", "hip"))
    return [r for r in old.records if same and r.key not in planned and r.case in case_ids]


def _check_expected(root: Path, args: argparse.Namespace, observed: dict[str, str]) -> int:
    path = results.expected_path(root, args.target, args.suite)
    expected = results.load_expected(path)
    if args.update_expected:
        merged = {**expected, **observed}
        results.save_expected(path, merged)
        print(f"accepted {len(observed)} verdicts into {path.relative_to(root)}")
        return 0
    changed = compare(expected, observed)
    if not changed:
        print(f"all {len(observed)} verdicts match {path.relative_to(root)}")
        return 0
    print(f"{len(changed)} verdicts differ from {path.relative_to(root)}:")
    for key, was, now in changed:
        print(f"  {key}: {was or '(new)'} -> {now}")
    accept = f"reprokit run --target {args.target} " + ("--suite sweep " if args.suite == "sweep" else "") + " ".join(f"--case {c}" for c in sorted({k.split('/')[0] for k, _, _ in changed}))
    print(f"accept the new state with: {accept} --update-expected")
    return 1


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a target's recorded verdicts (e.g. results brought back from a GPU box) as its expected state."""
    root = _root(args)
    _target(load_matrix(root / "matrix.yaml"), args.target)
    recorded = results.load(results.results_path(_out(args, root), args.target, args.suite))
    path = results.expected_path(root, args.target, args.suite)
    results.save_expected(path, {**results.load_expected(path), **{r.key: r.verdict for r in recorded.records}})
    print(f"accepted {len(recorded.records)} recorded verdicts into {path.relative_to(root)}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Drop recorded runs (e.g. made with a harness since fixed); `run --resume` runs them again."""
    root = _root(args)
    path = results.results_path(_out(args, root), args.target, args.suite)
    recorded = results.load(path)
    keep = [r for r in recorded.records if not any(fnmatch.fnmatchcase(r.key, g) for g in args.key)]
    dropped = len(recorded.records) - len(keep)
    if not dropped:
        raise InputError(f"{path}: no record matches {args.key[0]!r} (keys look like case/variant@dtype)")
    recorded.run["not_started"] = recorded.run.get("not_started", 0) + dropped
    results.save(path, results.ResultSet(recorded.target, recorded.run, recorded.environment, keep))
    print(f"dropped {dropped} records from {path}; `reprokit run --target {args.target} --suite {args.suite} "
          "--resume` runs them again")
    return 0


def cmd_new_case(args: argparse.Namespace) -> int:
    root = _root(args)
    oracle = new_case.oracle_from_flags(args.raises, args.match, args.stdout, args.stderr, args.hang)
    folder = new_case.create(root / "cases", args.id, source=Path(args.source) if args.source else None,
                             title=args.title, category=args.category, links=args.link, oracle=oracle,
                             timeout=args.timeout)
    print(f"created {folder.relative_to(root)}/ ({', '.join(sorted(p.name for p in folder.iterdir()))}); next: "
          f"reprokit run --target cpu --case {args.id}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    problems = validate.validate(_root(args))
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "all cases, matrix.yaml, claims.yaml and the sweep are valid")
    return 1 if problems else 0


def _case(root: Path, case_id: str) -> corpus.CaseDir:
    found = {c.case.id: c for c in corpus.discover(root / "cases")}.get(case_id)
    if found is None:
        raise InputError(f"{case_id!r}: no such case (see `reprokit list`)")
    return found


def cmd_upstream(args: argparse.Namespace) -> int:
    root = _root(args)
    cd = _case(root, args.id)
    target = _target(load_matrix(root / "matrix.yaml"), args.target)
    dtypes = [d for d in cd.case.requires.dtypes if d in target.dtypes]
    if not dtypes:
        raise InputError(f"cases/{args.id}/case.yaml: requires.dtypes: none of them is tested on {args.target}")
    path = results.results_path(_out(args, root), args.target)
    recorded = results.load(path) if path.exists() else None
    records = {r.dtype: r for r in (recorded.records if recorded else []) if r.case == args.id and r.variant == "repro"}
    dtype = next((d for d in dtypes if getattr(records.get(d), "verdict", None) == "reproduces"), dtypes[0])
    history = [(recorded.environment.get("torch", "?"), records[dtype].verdict)] if dtype in records else []
    filed = upstream.write(cd, args.target, target.device.kind, dtype, history,
                           Path(args.report_dir).resolve() if args.report_dir else root / "reports" / "upstream",
                           force=args.force, tlparse=shutil.which("tlparse"))
    for note in filed.notes:
        print(note, file=sys.stderr)
    print(f"wrote {filed.report}")
    for attachment in filed.attachments:
        print(f"attach {attachment} (drop it into the issue: gh cannot upload files)")
    print("search for duplicates first:")
    print(f"  {filed.commands[0]}")
    print("then file it:")
    print(f"  {filed.commands[1]}")
    return 0


def cmd_autofix(args: argparse.Namespace) -> int:
    root = _root(args)
    recorded = results.load(results.results_path(Path(args.results).resolve(), args.target))
    for line in autofix.propose(root, args.target, recorded, remote=args.remote, push=args.push):
        print(line)
    return 0


def cmd_images(args: argparse.Namespace) -> int:
    root = _root(args)
    for path in images.write_all(root / "images", Path(args.out or root / "images" / "rendered"),
                                 load_matrix(root / "matrix.yaml").targets):
        print(f"wrote {path}")
    return 0


def cmd_image(args: argparse.Namespace) -> int:
    root = _root(args)
    target = _target(load_matrix(root / "matrix.yaml"), args.target)
    print(images.build(root / "images", args.target, target, args.base_image,
                       Path(args.wheelhouse).resolve() if args.wheelhouse else None))
    return 0


def cmd_wheelhouse(args: argparse.Namespace) -> int:
    """Download every package a target's image installs, for `--wheelhouse` builds on air-gapped machines."""
    root = _root(args)
    target = _target(load_matrix(root / "matrix.yaml"), args.target)
    command = [sys.executable, "-m", "pip", "download", "--dest", args.dest, *images.packages(target)]
    print(" ".join(command), flush=True)
    return subprocess.run(command, check=False).returncode


def cmd_minify(args: argparse.Namespace) -> int:
    root = _root(args)
    cd = _case(root, args.id)
    recorded = results.results_path(_out(args, root), args.target)
    stage = next((r.stage for r in results.load(recorded).records if r.case == args.id and r.variant == "repro"),
                 None) if recorded.exists() else None
    path = minify.minify(cd, stage)
    print(f"wrote {path.relative_to(root)} and {path.with_name('MINIFIED.md').relative_to(root)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    root = _root(args)
    for path in render_all(root, _out(args, root), load_matrix(root / "matrix.yaml")):
        print(f"wrote {path}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    root = _root(args)
    for cd in corpus.select(corpus.discover(root / "cases"), args.case):
        print(f"{cd.case.id:40} {cd.case.category:18} {' '.join(cd.variants())}")
    return 0


def cmd_targets(args: argparse.Namespace) -> int:
    import json

    matrix = load_matrix(_root(args) / "matrix.yaml")
    chosen = {n: t for n, t in matrix.targets.items() if n not in args.exclude}
    if args.json:
        print(json.dumps({"include": [{"target": n, "family": t.family, "runs-on": t.runner_labels}
                                      for n, t in chosen.items()]}))
    else:
        for name, t in chosen.items():
            print(f"{name:12} {t.family:7} {t.description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reprokit", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("--root", default=".", help="repository root (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the corpus on one target and render its report")
    run.add_argument("--target", required=True)
    run.add_argument("--case", action="append", default=[], metavar="GLOB", help="select cases (repeatable)")
    run.add_argument("--suite", choices=["cases", "sweep"], default="cases",
                     help="the repro corpus (default) or the model-structure sweep")
    run.add_argument("--smoke", action="store_true", help="with --suite sweep: only the smoke subset")
    run.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic slices")
    run.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs (default: CPU cores)")
    run.add_argument("--timeout", type=float, help="seconds; overrides every case's own timeout")
    run.add_argument("--out", help="write results and reports under this folder instead of reports/")
    run.add_argument("--cache", metavar="DIR",
                     help="keep inductor and Triton caches in DIR across runs (fast reruns of one case; the "
                          "results say warm caches: published runs are cold)")
    run.add_argument("--resume", action="store_true", help="skip runs already recorded (also a killed run's)")
    run.add_argument("--update-expected", action="store_true", help="accept the observed verdicts as expected")
    run.add_argument("--host", action="store_true",
                     help="run in this Python environment (the default where Docker is not running)")
    run.add_argument("--container", action="store_true", help="run in the target's image (the default with Docker)")
    run.add_argument("--base-image", help="container mode: build FROM this image instead of matrix.yaml's")
    run.add_argument("--wheelhouse", metavar="DIR", help="container mode: install every package from these wheels")
    run.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    run.add_argument("--deadline", type=float, metavar="SECONDS",
                     help="start no new run after this many seconds (runs in flight finish); --resume continues")
    run.add_argument("--warm", action="store_true",
                     help="fork each run from a process that imported torch once (faster; published runs stay cold)")
    run.add_argument("--no-report", action="store_true", help="record results only (container mode renders outside)")
    run.add_argument("--no-ladder", action="store_true", help="do not re-run failures on eager/aot_eager")
    run.add_argument("--python", default=sys.executable, help="interpreter that runs the cases (needs torch)")
    run.set_defaults(func=cmd_run)

    acc = sub.add_parser("accept", help="accept a target's recorded verdicts as its expected state (no run)")
    acc.add_argument("--target", required=True)
    acc.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    acc.add_argument("--out", help="folder holding <target>/results.json (default: reports/)")
    acc.set_defaults(func=cmd_accept)

    fgt = sub.add_parser("forget", help="drop recorded runs so that --resume runs them again")
    fgt.add_argument("--target", required=True)
    fgt.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    fgt.add_argument("--out", help="folder holding <target>/results.json (default: reports/)")
    fgt.add_argument("key", nargs="+", metavar="KEY_GLOB", help="record keys, e.g. 'sweep-*/train-default@float8*'")
    fgt.set_defaults(func=cmd_forget)

    new = sub.add_parser("new-case", help="scaffold cases/ID, or make a case of a standalone repro script")
    new.add_argument("id", metavar="ID")
    new.add_argument("--from", dest="source", metavar="SCRIPT.py", help="copy this script unchanged as repro.py")
    new.add_argument("--raises", metavar="CLASS", help="the bug reproduces when this exception is raised")
    new.add_argument("--match", metavar="REGEX", help="... and its message matches this regex")
    new.add_argument("--stdout", metavar="REGEX", help="the bug reproduces when stdout matches")
    new.add_argument("--stderr", metavar="REGEX", help="the bug reproduces when stderr matches")
    new.add_argument("--hang", action="store_true", help="the bug is a hang: it reproduces past --timeout")
    new.add_argument("--timeout", type=int, help="seconds before a run is killed")
    new.add_argument("--category", default="diagnosis", choices=CATEGORIES)
    new.add_argument("--link", action="append", default=[], metavar="URL", help="upstream issue (repeatable)")
    new.add_argument("--title")
    new.set_defaults(func=cmd_new_case)

    val = sub.add_parser("validate", help="check every case, matrix.yaml, claims.yaml and the sweep (runs nothing)")
    val.set_defaults(func=cmd_validate)

    ups = sub.add_parser("upstream", help="run repro.py here as a maintainer would; write reports/upstream/ID.md, "
                                          "a ready-to-file PyTorch bug report, and print the gh commands")
    ups.add_argument("id", metavar="ID")
    ups.add_argument("--target", default="cpu", help="whose device kind and dtypes the run uses (default cpu)")
    ups.add_argument("--out", help="folder holding <target>/results.json, the case's history (default: reports/)")
    ups.add_argument("--report-dir", metavar="DIR", help="write the report here (default: reports/upstream/)")
    ups.add_argument("--force", action="store_true",
                     help="write it even if the case says the behaviour is documented or links a pytorch issue")
    ups.set_defaults(func=cmd_upstream)

    fix = sub.add_parser("autofix", help="one branch (and with --push a PR) per case whose verdict changed")
    fix.add_argument("--target", required=True)
    fix.add_argument("--results", required=True, metavar="DIR", help="folder holding <target>/results.json")
    fix.add_argument("--remote", default="origin")
    fix.add_argument("--push", action="store_true", help="push the branches and open PRs (gh)")
    fix.set_defaults(func=cmd_autofix)

    ims = sub.add_parser("images", help="render every target's Dockerfile into images/rendered/")
    ims.add_argument("--out", help="folder for the rendered Dockerfiles")
    ims.set_defaults(func=cmd_images)

    img = sub.add_parser("image", help="build one target's image with the docker SDK (reused if unchanged)")
    img.add_argument("--target", required=True)
    img.add_argument("--base-image", help="build FROM this image instead of matrix.yaml's")
    img.add_argument("--wheelhouse", metavar="DIR", help="install every Python package from these wheels (offline)")
    img.set_defaults(func=cmd_image)

    whl = sub.add_parser("wheelhouse", help="download the wheels a target's image installs (for --wheelhouse)")
    whl.add_argument("--target", required=True)
    whl.add_argument("dest", metavar="DIR")
    whl.set_defaults(func=cmd_wheelhouse)

    mini = sub.add_parser("minify", help="run PyTorch's minifier on a failing case; keeps minified_repro.py")
    mini.add_argument("id", metavar="ID")
    mini.add_argument("--target", default="cpu", help="whose recorded stage picks dynamo or aot (default cpu)")
    mini.add_argument("--out", help="folder holding <target>/results.json (default: reports/)")
    mini.set_defaults(func=cmd_minify)

    rep = sub.add_parser("report", help="render reports/*.md from the recorded results")
    rep.add_argument("--out", help="folder holding <target>/results.json (default: reports/)")
    rep.set_defaults(func=cmd_report)

    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("--case", action="append", default=[], metavar="GLOB")
    lst.set_defaults(func=cmd_list)

    tgt = sub.add_parser("targets", help="list the hardware targets of matrix.yaml")
    tgt.add_argument("--json", action="store_true", help="as a GitHub Actions matrix")
    tgt.add_argument("--exclude", action="append", default=[], metavar="TARGET", help="leave this target out")
    tgt.set_defaults(func=cmd_targets)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"reprokit: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reprokit: interrupted; finished runs are kept, continue with --resume", file=sys.stderr)
        return 130


def main_exit() -> None:
    sys.exit(main())
