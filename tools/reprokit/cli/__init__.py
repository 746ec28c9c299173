"""The `reprokit` command line: it parses arguments and makes one call per sub-command; nox sessions call it."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from reprokit import __version__
from reprokit.contrib import autofix, bisection, minify, new_case, upstream, validate
from reprokit.images import dockerfiles, wheelhouse
from reprokit.model import corpus
from reprokit.model.case import AREAS
from reprokit.model.schema import CATEGORIES, InputError
from reprokit.publish import website
from reprokit.run import lifecycle
from reprokit.run.request import RunRequest, load_root_matrix, target_of
from reprokit.store import expected, importer
from reprokit.store.store import Store
from reprokit.store.views import HISTORY_FIELDS, current, history_rows, repro_history


def _root(args: argparse.Namespace) -> Path:
    root = Path(args.root).resolve()
    load_root_matrix(root)
    return root


def _store(args: argparse.Namespace, root: Path) -> Store:
    return Store((Path(args.out).resolve() if getattr(args, "out", None) else root) / "results")


def _reports(args: argparse.Namespace, root: Path) -> Path:
    return Path(args.out).resolve() / "reports" if getattr(args, "out", None) else root / "reports"


def request_of(args: argparse.Namespace) -> RunRequest:
    where = "host" if args.host else "container" if args.container else "auto"
    return RunRequest(
        root=_root(args), target=args.target, suite=args.suite, cases=args.case, smoke=args.smoke, shard=args.shard,
        jobs=args.jobs, jobs_per_gpu=args.jobs_per_gpu, timeout=args.timeout,
        out=Path(args.out).resolve() if args.out else None,
        cache=Path(args.cache).resolve() if args.cache else None, resume=args.resume,
        update_expected=args.update_expected, where=where, base_image=args.base_image, base_python=args.base_python,
        wheelhouse=Path(args.wheelhouse).resolve() if args.wheelhouse else None, force=args.force,
        deadline=args.deadline, warm=args.warm, render=not args.no_report, ladder=not args.no_ladder,
        python=args.python, torch=args.torch, skip_recorded=args.skip_recorded, torch_index=args.torch_index)


def cmd_run(args: argparse.Namespace) -> int:
    return lifecycle.run(request_of(args), log=lambda line: print(line, flush=True)).exit_code


def cmd_run_request(args: argparse.Namespace) -> int:
    return lifecycle.run_request_json(args.request).exit_code


def cmd_where(args: argparse.Namespace) -> int:
    print(lifecycle.placement(request_of(args)))
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    root = _root(args)
    target = target_of(load_root_matrix(root), args.target)
    versions = args.versions or target.pins.history
    if len(versions) < 2:
        raise InputError(f"matrix.yaml: targets.{args.target}.pins.history: needs two releases or more to bisect "
                         "(or pass --versions)")
    req = RunRequest(root=root, target=args.target, where="host", render=False, jobs=args.jobs,
                     out=Path(args.out).resolve() if args.out else None, torch_index=args.torch_index,
                     wheelhouse=Path(args.wheelhouse).resolve() if args.wheelhouse else None, force=args.force)
    try:
        found = bisection.bisect_case(req, args.id, versions, log=lambda line: print(line, flush=True))
    except bisection.BisectionInterrupted as stop:
        print(f"bisect: interrupted while running torch {stop}; what finished is in the store, run it again to go on")
        return 130
    print(f"{args.id} on {args.target}: {found.summary()}")
    print(f"runs made: {len(found.ran)} ({', '.join(found.ran) or 'none: all recorded'})")
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    """A target's history releases, as a GitHub Actions matrix with --json (one job per release)."""
    target = target_of(load_root_matrix(_root(args)), args.target)
    print(json.dumps({"torch": target.pins.history}) if args.json else "\n".join(target.pins.history))
    return 0


def cmd_changed_cases(args: argparse.Namespace) -> int:
    """Case ids whose folder differs from BASE (git), one per line: a pull request runs them on every release."""
    root = _root(args)
    proc = subprocess.run(["git", "diff", "--name-only", f"{args.base}...HEAD", "--", "cases/"], cwd=root,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InputError(f"git diff {args.base}...HEAD: {(proc.stderr.strip().splitlines() or ['failed'])[-1]}")
    present = {c.case.id for c in corpus.discover(root / "cases")}
    ids = sorted({Path(p).parts[1] for p in proc.stdout.splitlines() if len(Path(p).parts) > 2} & present)
    print(" ".join(f"--case={i}" for i in ids) if args.as_args else "\n".join(ids))
    return 0


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a target's recorded verdicts of its pinned release (e.g. results brought back) as its expected state."""
    root = _root(args)
    target = target_of(load_root_matrix(root), args.target)
    view = current(_store(args, root).load(args.target, args.suite), args.target, args.suite, target.pins.torch)
    if view is None or view.off_pin:
        raise InputError(f"{args.target}: no records of the pinned torch {target.pins.torch} to accept")
    path = expected.expected_path(root, args.target, args.suite)
    expected.save(path, {**expected.load(path), **{r.key: r.verdict for r in view.records}})
    print(f"accepted {len(view.records)} recorded verdicts into {path.relative_to(root)}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Drop recorded runs of one torch (e.g. made with a harness since fixed); `run --resume` runs them again."""
    root = _root(args)
    dropped = _store(args, root).forget(args.target, args.suite, args.torch,
                                        lambda r: not any(fnmatch.fnmatchcase(r.key, g) for g in args.key))
    if not dropped:
        raise InputError(f"results/{args.target}/{args.suite}/{args.torch}.jsonl: no record matches {args.key[0]!r} "
                         "(keys look like case/variant@dtype)")
    print(f"dropped {dropped} records; `reprokit run --target {args.target} --suite {args.suite} --resume` runs "
          "them again")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Merge results recorded elsewhere (a store folder, or a results.json of the layout before the store)."""
    root = _root(args)
    store = _store(args, root)
    for source in args.source:
        records, runs = importer.import_into(store, Path(source))
        print(f"imported {records} records of {runs} run(s) from {source} into {store.folder}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    root = _root(args)
    rows = history_rows(_store(args, root).load(args.target, args.suite), args.case, args.torch)
    fields = HISTORY_FIELDS
    if args.json:
        print(json.dumps([{f: str(getattr(r, f)) for f in fields} | {"run_id": r.run_id} for r in rows], indent=1))
        return 0
    from tabulate import tabulate

    print(tabulate([[str(getattr(r, f)) for f in fields] for r in rows], headers=list(fields), tablefmt="simple"))
    print(f"{len(rows)} records")
    return 0


def cmd_new_case(args: argparse.Namespace) -> int:
    root = _root(args)
    oracle = new_case.oracle_from_flags(args.raises, args.match, args.stdout, args.stderr, args.hang,
                                        args.wrong_result)
    if oracle is None and (not args.source or args.no_run):
        oracle = {"kind": "nonzero-exit"}
    provenance = new_case.Provenance(source=args.case_source, reported_on=args.reported_on,
                                     issue_state=args.issue_state, area=args.area, requires_torch=args.requires_torch,
                                     notes=args.notes,
                                     devices=tuple(d for d in (args.devices or "").split(",") if d))
    folder = new_case.create(root / "cases", args.id, source=Path(args.source) if args.source else None,
                             title=args.title, category=args.category, links=args.link, oracle=oracle,
                             timeout=args.timeout, fixed=Path(args.fixed) if args.fixed else None,
                             provenance=provenance, observe_run=not args.no_run)
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
    target = target_of(load_root_matrix(root), args.target)
    dtypes = [d for d in cd.case.requires.dtypes if d in target.dtypes]
    if not dtypes:
        raise InputError(f"cases/{args.id}/case.yaml: requires.dtypes: none of them is tested on {args.target}")
    dtype, history = repro_history(_store(args, root).load(args.target, "cases"), args.target, args.id, dtypes)
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
    target = target_of(load_root_matrix(root), args.target)
    view = current(Store(Path(args.results).resolve()).load(args.target, "cases"), args.target, "cases",
                   target.pins.torch)
    if view is None:
        raise InputError(f"{args.results}: no records of target {args.target}")
    for line in autofix.propose(root, args.target, view, remote=args.remote, push=args.push):
        print(line)
    return 0


def cmd_images(args: argparse.Namespace) -> int:
    root = _root(args)
    for path in dockerfiles.write_all(root / "images", Path(args.out or root / "images" / "rendered"),
                                 load_root_matrix(root).targets):
        print(f"wrote {path}")
    return 0


def cmd_image(args: argparse.Namespace) -> int:
    root = _root(args)
    target = target_of(load_root_matrix(root), args.target)
    image = dockerfiles.build(root / "images", args.target, target, args.base_image,
                         Path(args.wheelhouse).resolve() if args.wheelhouse else None, args.base_python,
                         log=lambda line: print(line, flush=True))
    if args.record:
        dockerfiles.record(Path(args.record), image, args.target, args.base_image or target.base_image,
                      args.base_python or target.python, Path(args.wheelhouse) if args.wheelhouse else None)
        print(f"wrote {args.record}")
    print(image.tag)
    return 0


def cmd_wheelhouse(args: argparse.Namespace) -> int:
    """Download every package a target's image installs, for `--wheelhouse` builds on air-gapped machines."""
    root = _root(args)
    target = target_of(load_root_matrix(root), args.target)
    dest, python = Path(args.dest).resolve(), dockerfiles.python_of(target, args.base_python)
    for command in wheelhouse.download_commands(dockerfiles.torch_packages(target), dockerfiles.packages(target), dest, python,
                                                args.torch_index or target.pins.index_url):
        print(" ".join(command), flush=True)
        code = subprocess.run(command, check=False).returncode
        if code:
            return code
    wheelhouse.check(dest, args.target, target)
    print(f"{dest}: the wheels of {args.target}'s image (torch {target.pins.torch}, Python {python}); "
          f"build with --wheelhouse {dest}" + (f" --base-python {python}" if args.base_python else ""))
    return 0


def cmd_minify(args: argparse.Namespace) -> int:
    root = _root(args)
    cd = _case(root, args.id)
    loaded = _store(args, root).load(args.target, "cases")
    stage = next((r.stage for r in loaded.records if r.case == args.id and r.variant == "repro"), None)
    path = minify.minify(cd, stage)
    print(f"wrote {path.relative_to(root)} and {path.with_name('MINIFIED.md').relative_to(root)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    root = _root(args)
    for path in lifecycle.render_reports(root, _reports(args, root), load_root_matrix(root), _store(args, root)):
        print(f"wrote {path}")
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    root = _root(args)
    written = website.build(root, Path(args.out).resolve(), load_root_matrix(root),
                            Store(Path(args.results or root / "results").resolve()))
    print(f"wrote {len(written)} files of the site under {args.out} (open index.html)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    root = _root(args)
    skipped = []
    for cd in corpus.select(corpus.discover(root / "cases", on_error=skipped.append), args.case):
        print(f"{cd.case.id:40} {cd.case.category:18} {' '.join(cd.variants())}")
    for message in skipped:
        print(message, file=sys.stderr)
    return 2 if skipped else 0


def cmd_targets(args: argparse.Namespace) -> int:
    matrix = load_root_matrix(_root(args))
    chosen = {n: t for n, t in matrix.targets.items() if n not in args.exclude}
    if args.json:
        print(json.dumps({"include": [{"target": n, "family": t.family, "runs-on": t.runner_labels}
                                      for n, t in chosen.items()]}))
    else:
        for name, t in chosen.items():
            print(f"{name:12} {t.family:7} {t.description}")
    return 0


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", required=True)
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="select cases (repeatable)")
    p.add_argument("--suite", choices=["cases", "sweep"], default="cases",
                     help="the repro corpus (default) or the model-structure sweep")
    p.add_argument("--smoke", action="store_true", help="with --suite sweep: only the smoke subset")
    p.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic slices")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs (default: CPU cores)")
    p.add_argument("--jobs-per-gpu", type=int, metavar="K",
                   help="on accelerators: at most K runs at once on one device (each run sees only its own "
                        "devices, the least loaded; default: no cap beyond --jobs)")
    p.add_argument("--timeout", type=float, help="seconds; overrides every case's own timeout")
    p.add_argument("--out", help="keep the store and reports under OUT/results and OUT/reports instead of the repository's")
    p.add_argument("--cache", metavar="DIR",
                     help="keep inductor and Triton caches in DIR across runs (fast reruns of one case; the "
                          "results say warm caches: published runs are cold)")
    p.add_argument("--resume", action="store_true", help="skip runs already recorded (also a killed run's)")
    p.add_argument("--update-expected", action="store_true", help="accept the observed verdicts as expected")
    p.add_argument("--host", action="store_true",
                     help="run in this Python environment (the default where Docker is not running)")
    p.add_argument("--container", action="store_true", help="run in the target's image (the default with Docker)")
    p.add_argument("--base-image", help="container mode: build FROM this image instead of matrix.yaml's")
    p.add_argument("--base-python", metavar="X.Y", help="the Python of --base-image (default: matrix.yaml's python)")
    p.add_argument("--wheelhouse", metavar="DIR", help="container mode: install every package from these wheels")
    p.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    p.add_argument("--deadline", type=float, metavar="SECONDS",
                     help="start no new run after this many seconds (runs in flight finish); --resume continues")
    p.add_argument("--warm", action="store_true",
                     help="fork each run from a process that imported torch once (faster; published runs stay cold)")
    p.add_argument("--no-report", action="store_true", help="record results only (container mode renders outside)")
    p.add_argument("--no-ladder", action="store_true", help="do not re-run failures on eager/aot_eager")
    p.add_argument("--torch", metavar="VERSION",
                   help="run this torch release (or 'nightly') in its own environment, built with uv (host mode)")
    p.add_argument("--torch-index", metavar="URL", help="with --torch: the index to install it from")
    p.add_argument("--skip-recorded", action="store_true",
                   help="skip runs already recorded for this torch with the same case content (the history)")
    p.add_argument("--python", help="interpreter that runs the cases (needs torch; default: this one; host mode)")


OUT_HELP = "folder holding results/ (the store) and reports/ (default: the repository's)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reprokit", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("--root", default=".", help="repository root (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the corpus on one target, record it in the store, render the reports")
    _run_options(run)
    run.set_defaults(func=cmd_run)

    whr = sub.add_parser("where", help="print where `run` with these options runs cases: host or container")
    _run_options(whr)
    whr.set_defaults(func=cmd_where)

    req = sub.add_parser("run-request", help=argparse.SUPPRESS)  # a container's runner: the whole request as JSON
    req.add_argument("request")
    req.set_defaults(func=cmd_run_request)

    hist = sub.add_parser("history", help="one row per recorded run: case, variant, dtype, target, torch, verdict")
    hist.add_argument("--target")
    hist.add_argument("--suite", choices=["cases", "sweep"])
    hist.add_argument("--case", action="append", default=[], metavar="GLOB")
    hist.add_argument("--torch", metavar="VERSION", help="a build (2.13.0+cpu) or a release (2.13.0)")
    hist.add_argument("--json", action="store_true")
    hist.add_argument("--out", help=OUT_HELP)
    hist.set_defaults(func=cmd_history)

    bis = sub.add_parser("bisect", help="find the torch releases where a case's verdict changes (recorded first)")
    bis.add_argument("id", metavar="ID")
    bis.add_argument("--target", required=True)
    bis.add_argument("--versions", nargs="+", metavar="V", help="releases, oldest first (default: pins.history)")
    bis.add_argument("--torch-index", metavar="URL", help="the index to install torch from (e.g. the nightly one)")
    bis.add_argument("--wheelhouse", metavar="DIR", help="install torch from these wheels (offline)")
    bis.add_argument("--jobs", type=int, default=2)
    bis.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    bis.add_argument("--out", help=OUT_HELP)
    bis.set_defaults(func=cmd_bisect)

    ver = sub.add_parser("versions", help="a target's history releases (matrix.yaml pins.history)")
    ver.add_argument("--target", required=True)
    ver.add_argument("--json", action="store_true", help="as a GitHub Actions matrix")
    ver.set_defaults(func=cmd_versions)

    chg = sub.add_parser("changed-cases", help="case ids changed since a git ref (for pull requests)")
    chg.add_argument("--base", required=True, metavar="REF")
    chg.add_argument("--as-args", action="store_true", help="print them as --case=ID arguments for `run`")
    chg.set_defaults(func=cmd_changed_cases)

    imp = sub.add_parser("import", help="merge results recorded elsewhere into the store (no re-run)")
    imp.add_argument("source", nargs="+", metavar="PATH", help="a results store folder or a legacy results.json")
    imp.add_argument("--out", help=OUT_HELP)
    imp.set_defaults(func=cmd_import)


    acc = sub.add_parser("accept", help="accept a target's recorded verdicts as its expected state (no run)")
    acc.add_argument("--target", required=True)
    acc.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    acc.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    acc.set_defaults(func=cmd_accept)

    fgt = sub.add_parser("forget", help="drop recorded runs so that --resume runs them again")
    fgt.add_argument("--target", required=True)
    fgt.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    fgt.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    fgt.add_argument("--torch", required=True, metavar="BUILD", help="the torch build, e.g. 2.13.0+cpu")
    fgt.add_argument("key", nargs="+", metavar="KEY_GLOB", help="record keys, e.g. 'sweep-*/train-default@float8*'")
    fgt.set_defaults(func=cmd_forget)

    new = sub.add_parser("new-case", help="scaffold cases/ID, or make a case of a standalone repro script")
    new.add_argument("id", metavar="ID")
    new.add_argument("--from", dest="source", metavar="SCRIPT.py", help="copy this script unchanged as repro.py")
    new.add_argument("--raises", metavar="CLASS", help="the bug reproduces when this exception is raised")
    new.add_argument("--match", metavar="REGEX", help="... and its message matches this regex (alone: any exception whose message matches)")
    new.add_argument("--stdout", metavar="REGEX", help="the bug reproduces when stdout matches")
    new.add_argument("--stderr", metavar="REGEX", help="the bug reproduces when stderr matches")
    new.add_argument("--hang", action="store_true", help="the bug is a hang: it reproduces past --timeout")
    new.add_argument("--timeout", type=int, help="seconds before a run is killed")
    new.add_argument("--category", default="diagnosis", choices=CATEGORIES)
    new.add_argument("--link", action="append", default=[], metavar="URL", help="upstream issue (repeatable)")
    new.add_argument("--title", help="default: the first line of the script's docstring")
    new.add_argument("--wrong-result", action="store_true",
                     help="the bug is a wrong result: the script compares with eager and an assertion fails")
    new.add_argument("--fixed", metavar="SCRIPT.py", help="copy this script unchanged as fixed.py")
    new.add_argument("--no-run", action="store_true",
                     help="do not run --from SCRIPT once (by default, without an oracle flag, its failure here "
                          "proposes the oracle: the exception class it raised and a stable prefix of the message)")
    new.add_argument("--source", dest="case_source", choices=["article", "sweep", "upstream"],
                     help="where the case comes from (default: upstream when a --link is a pytorch/pytorch issue)")
    new.add_argument("--reported-on", metavar="VERSION", help="the torch version the issue reports (e.g. 2.1.0)")
    new.add_argument("--issue-state", choices=["open", "closed"], help="the issue's state today, from its page")
    new.add_argument("--area", choices=AREAS, help="the subsystem an upstream issue is about")
    new.add_argument("--requires-torch", metavar="SPEC", help="releases the script can run on, e.g. '>=2.4'")
    new.add_argument("--notes", help="free text: what the issue reports, what the fix is")
    new.add_argument("--devices", metavar="LIST",
                     help="comma-separated device kinds (cpu,cuda,rocm,npu); default: read from the script")
    new.set_defaults(func=cmd_new_case)

    val = sub.add_parser("validate", help="check every case, matrix.yaml, claims.yaml and the sweep (runs nothing)")
    val.set_defaults(func=cmd_validate)

    ups = sub.add_parser("upstream", help="run repro.py here as a maintainer would; write reports/upstream/ID.md, "
                                          "a ready-to-file PyTorch bug report, and print the gh commands")
    ups.add_argument("id", metavar="ID")
    ups.add_argument("--target", default="cpu", help="whose device kind and dtypes the run uses (default cpu)")
    ups.add_argument("--out", help=OUT_HELP)
    ups.add_argument("--report-dir", metavar="DIR", help="write the report here (default: reports/upstream/)")
    ups.add_argument("--force", action="store_true",
                     help="write it even if the case says the behaviour is documented or links a pytorch issue")
    ups.set_defaults(func=cmd_upstream)

    fix = sub.add_parser("autofix", help="one branch (and with --push a PR) per case whose verdict changed")
    fix.add_argument("--target", required=True)
    fix.add_argument("--results", required=True, metavar="DIR", help="a results store folder (e.g. out/results)")
    fix.add_argument("--remote", default="origin")
    fix.add_argument("--push", action="store_true", help="push the branches and open PRs (gh)")
    fix.set_defaults(func=cmd_autofix)

    ims = sub.add_parser("images", help="render every target's Dockerfile into images/rendered/")
    ims.add_argument("--out", help="folder for the rendered Dockerfiles")
    ims.set_defaults(func=cmd_images)

    img = sub.add_parser("image", help="build one target's image with the docker SDK (reused if unchanged)")
    img.add_argument("--target", required=True)
    img.add_argument("--base-image", help="build FROM this image instead of matrix.yaml's")
    img.add_argument("--base-python", metavar="X.Y", help="the Python of --base-image (default: matrix.yaml's python)")
    img.add_argument("--wheelhouse", metavar="DIR", help="install every Python package from these wheels (offline)")
    img.add_argument("--record", metavar="FILE.json", help="write the image's tag, id, size and build time here")
    img.set_defaults(func=cmd_image)

    whl = sub.add_parser("wheelhouse", help="download the wheels a target's image installs (for --wheelhouse)")
    whl.add_argument("--target", required=True)
    whl.add_argument("--base-python", metavar="X.Y", help="the Python of the base image the wheels are for "
                                                          "(default: matrix.yaml's python)")
    whl.add_argument("--torch-index", metavar="URL", help="the index torch comes from (default: the target's)")
    whl.add_argument("dest", metavar="DIR")
    whl.set_defaults(func=cmd_wheelhouse)

    mini = sub.add_parser("minify", help="run PyTorch's minifier on a failing case; keeps minified_repro.py")
    mini.add_argument("id", metavar="ID")
    mini.add_argument("--target", default="cpu", help="whose recorded stage picks dynamo or aot (default cpu)")
    mini.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    mini.set_defaults(func=cmd_minify)

    rep = sub.add_parser("report", help="render reports/*.md from the recorded results")
    rep.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    rep.set_defaults(func=cmd_report)

    site = sub.add_parser("site", help="render the compatibility site (static HTML) from the recorded results")
    site.add_argument("--out", required=True, metavar="DIR", help="folder the site is written to")
    site.add_argument("--results", metavar="DIR", help="the results store to read (default: the repository's)")
    site.set_defaults(func=cmd_site)

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
        print("reprokit: interrupted", file=sys.stderr)
        return 130


def main_exit() -> None:
    sys.exit(main())
