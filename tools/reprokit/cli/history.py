"""The store's history: `history`, `bisect`, `versions`, `changed-cases`, `import`, `accept`, `forget`, `rehash`."""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from pathlib import Path

from reprokit.cli.common import OUT_HELP, TARGET_HELP, root_of, store_of
from reprokit.contrib import bisect_case, bisect_script, bisection, new_case
from reprokit.model import corpus
from reprokit.model.schema import InputError
from reprokit.run import rejudge
from reprokit.run.request import RunRequest, load_root_matrix, target_of
from reprokit.store import expected, importer, rehash
from reprokit.store.views import HISTORY_FIELDS, current, history_rows


def cmd_history(args: argparse.Namespace) -> int:
    root = root_of(args)
    rows = history_rows(store_of(args, root).load(args.target, args.suite), args.case, args.torch)
    fields = HISTORY_FIELDS
    if args.json:
        print(json.dumps([{f: str(getattr(r, f)) for f in fields} | {"run_id": r.run_id} for r in rows], indent=1))
        return 0
    from tabulate import tabulate

    print(tabulate([[str(getattr(r, f)) for f in fields] for r in rows], headers=list(fields), tablefmt="simple"))
    print(f"{len(rows)} records")
    return 0


def add_history(sub) -> None:
    hist = sub.add_parser("history", help="one row per recorded run: case, variant, dtype, target, torch, verdict")
    hist.add_argument("--target", help="only this target of matrix.yaml (default: every target)")
    hist.add_argument("--suite", choices=["cases", "sweep"])
    hist.add_argument("--case", action="append", default=[], metavar="GLOB")
    hist.add_argument("--torch", metavar="VERSION", help="a build (2.13.0+cpu) or a release (2.13.0)")
    hist.add_argument("--json", action="store_true")
    hist.add_argument("--out", help=OUT_HELP)
    hist.set_defaults(func=cmd_history)


def cmd_bisect(args: argparse.Namespace) -> int:
    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    versions = bisection.candidates(args.versions, target.pins.history, between=not args.no_between)
    also_between = tuple(v for v in target.pins.history if v not in versions)
    if len(versions) < 2:
        raise InputError(f"matrix.yaml: targets.{args.target}.pins.history: needs two releases or more to bisect "
                         "(or pass --versions)")
    if not args.id and not args.source:
        raise InputError("bisect: give a case ID or --from SCRIPT")
    req = RunRequest(root=root, target=args.target, where="host", render=False, jobs=args.jobs,
                     out=Path(args.out).resolve() if args.out else None, torch_index=args.torch_index,
                     wheelhouse=Path(args.wheelhouse).resolve() if args.wheelhouse else None, force=args.force,
                     timeout=args.timeout)
    log = lambda line: print(line, flush=True)  # noqa: E731
    try:
        if args.source:
            oracle = new_case.oracle_from_flags(args.raises, args.match, args.stdout, args.stderr, args.hang,
                                                args.wrong_result, args.nonzero_exit)
            done = bisect_script.bisect_from(req, Path(args.source).resolve(), versions, oracle, args.timeout,
                                             keep_id=(args.id or bisect_script.case_id_for(Path(args.source)))
                                             if args.keep else None, log=log, max_envs=args.max_envs)
            found = done.found
        else:
            found = bisect_case.bisect_case(req, args.id, versions, log=log, max_envs=args.max_envs)
    except bisection.BisectionInterrupted as stop:
        print(f"bisect: interrupted while running torch {stop}; what finished is in the store, run it again to go on")
        return 130
    if args.source:
        print("\n".join(done.table()))
        print(f"kept as cases/{done.case_id}/" if done.kept else "not kept (--keep makes it a case)")
        if done.scratch:
            print(f"undecided: the scratch repository with what each run printed is kept in {done.scratch} "
                  f"(`reprokit --root {done.scratch} history --case {done.case_id}`)")
    print(f"{args.id or args.source} on {args.target}: {found.summary(also_between)}")
    print(f"runs made: {len(found.ran)} ({', '.join(found.ran) or 'none: all recorded'}); environments built: "
          f"{len(found.built)}")
    return 1 if found.answer(also_between).kind == "undecided" else 0  # a script's caller must not read it as found


def add_bisect(sub) -> None:
    bis = sub.add_parser("bisect", help="find the torch releases where a case's verdict changes (recorded first)")
    bis.add_argument("id", metavar="ID", nargs="?")
    bis.add_argument("--target", required=True, help=TARGET_HELP)
    bis.add_argument("--versions", nargs="+", metavar="V",
                     help="releases to search (default: pins.history); the history releases between them are "
                          "searched too, unless --no-between")
    bis.add_argument("--no-between", action="store_true",
                     help="search only the --versions given (the answer names the releases in between not tested)")
    bis.add_argument("--torch-index", metavar="URL", help="the index to install torch from (e.g. the nightly one)")
    bis.add_argument("--wheelhouse", metavar="DIR", help="install torch from these wheels (offline)")
    bis.add_argument("--jobs", type=int, default=2)
    bis.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    bis.add_argument("--out", help=OUT_HELP)
    bis.add_argument("--from", dest="source", metavar="SCRIPT.py",
                     help="bisect this script (your own repro) instead of a case; nothing is added without --keep")
    bis.add_argument("--keep", action="store_true", help="with --from: add the script as case ID (its runs recorded)")
    bis.add_argument("--raises", metavar="CLASS", help="with --from: the bug reproduces when this exception is raised")
    bis.add_argument("--match", metavar="REGEX", help="with --from: ... and its message matches this regex")
    bis.add_argument("--stdout", metavar="REGEX", help="with --from: the bug reproduces when stdout matches")
    bis.add_argument("--stderr", metavar="REGEX", help="with --from: the bug reproduces when stderr matches")
    bis.add_argument("--hang", action="store_true", help="with --from: the bug is a hang (past --timeout)")
    bis.add_argument("--wrong-result", action="store_true",
                     help="with --from: the bug is a wrong result (an assertion in the script fails)")
    bis.add_argument("--nonzero-exit", action="store_true",
                     help="with --from: the bug reproduces when the script exits non-zero")
    bis.add_argument("--timeout", type=int, help="seconds before a run is killed (default: the case's own)")
    bis.add_argument("--max-envs", type=int, metavar="N",
                     help="build at most N torch environments (each a few GB); the answer says where it stopped")
    bis.set_defaults(func=cmd_bisect)


def cmd_versions(args: argparse.Namespace) -> int:
    """A target's history releases, as a GitHub Actions matrix with --json (one job per release)."""
    target = target_of(load_root_matrix(root_of(args)), args.target)
    print(json.dumps({"torch": target.pins.history}) if args.json else "\n".join(target.pins.history))
    return 0


def add_versions(sub) -> None:
    ver = sub.add_parser("versions", help="a target's history releases (matrix.yaml pins.history)")
    ver.add_argument("--target", required=True, help=TARGET_HELP)
    ver.add_argument("--json", action="store_true", help="as a GitHub Actions matrix")
    ver.set_defaults(func=cmd_versions)


def cmd_changed_cases(args: argparse.Namespace) -> int:
    """Case ids whose folder differs from BASE (git), one per line: a pull request runs them on every release."""
    root = root_of(args)
    proc = subprocess.run(["git", "diff", "--name-only", f"{args.base}...HEAD", "--", "cases/"], cwd=root,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InputError(f"git diff {args.base}...HEAD: {(proc.stderr.strip().splitlines() or ['failed'])[-1]}")
    present = {c.case.id for c in corpus.discover(root / "cases")}
    ids = sorted({Path(p).parts[1] for p in proc.stdout.splitlines() if len(Path(p).parts) > 2} & present)
    print(" ".join(f"--case={i}" for i in ids) if args.as_args else "\n".join(ids))
    return 0


def add_changed_cases(sub) -> None:
    chg = sub.add_parser("changed-cases", help="case ids changed since a git ref (for pull requests)")
    chg.add_argument("--base", required=True, metavar="REF")
    chg.add_argument("--as-args", action="store_true", help="print them as --case=ID arguments for `run`")
    chg.set_defaults(func=cmd_changed_cases)


def cmd_import(args: argparse.Namespace) -> int:
    """Merge results recorded elsewhere (a store folder, or a results.json of the layout before the store)."""
    root = root_of(args)
    store = store_of(args, root)
    for source in args.source:
        records, runs, refused = importer.import_into(store, Path(source), root, judge=rejudge.refusal)
        for line in refused:
            print(line, file=sys.stderr)
        print(f"imported {records} records of {runs} run(s) from {source} into {store.folder}")
    return 1 if refused else 0


def add_import(sub) -> None:
    imp = sub.add_parser("import", help="merge results recorded elsewhere into the store (no re-run)")
    imp.add_argument("source", nargs="+", metavar="PATH", help="a results store folder or a legacy results.json")
    imp.add_argument("--out", help=OUT_HELP)
    imp.set_defaults(func=cmd_import)


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a target's recorded verdicts of its pinned release (e.g. results brought back) as its expected state."""
    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    view = current(store_of(args, root).load(args.target, args.suite), args.target, args.suite, target.pins.torch)
    if view is None or view.off_pin:
        raise InputError(f"{args.target}: no records of the pinned torch {target.pins.torch} to accept")
    path = expected.expected_path(root, args.target, args.suite)
    expected.save(path, {**expected.load(path), **{r.key: r.verdict for r in view.records}})
    print(f"accepted {len(view.records)} recorded verdicts into {path.relative_to(root)}")
    return 0


def add_accept(sub) -> None:
    acc = sub.add_parser("accept", help="accept a target's recorded verdicts as its expected state (no run)")
    acc.add_argument("--target", required=True, help=TARGET_HELP)
    acc.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    acc.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    acc.set_defaults(func=cmd_accept)


def cmd_forget(args: argparse.Namespace) -> int:
    """Drop recorded runs of one torch (e.g. made with a harness since fixed); `run --resume` runs them again."""
    root = root_of(args)
    dropped = store_of(args, root).forget(args.target, args.suite, args.torch,
                                        lambda r: not any(fnmatch.fnmatchcase(r.key, g) for g in args.key))
    if not dropped:
        raise InputError(f"results/{args.target}/{args.suite}/{args.torch}.jsonl: no record matches {args.key[0]!r} "
                         "(keys look like case/variant@dtype)")
    print(f"dropped {dropped} records; `reprokit run --target {args.target} --suite {args.suite} --resume` runs "
          "them again")
    return 0


def add_forget(sub) -> None:
    fgt = sub.add_parser("forget", help="drop recorded runs so that --resume runs them again")
    fgt.add_argument("--target", required=True, help=TARGET_HELP)
    fgt.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    fgt.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    fgt.add_argument("--torch", required=True, metavar="BUILD", help="the torch build, e.g. 2.13.0+cpu")
    fgt.add_argument("key", nargs="+", metavar="KEY_GLOB", help="record keys, e.g. 'sweep-*/train-default@float8*'")
    fgt.set_defaults(func=cmd_forget)


def cmd_rehash(args: argparse.Namespace) -> int:
    """Give records of a whole-folder case_hash their version's run identity, from git history (once per store)."""
    counts = rehash.rehash(root_of(args))
    print(", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "no record has a case_hash")
    return 0


def add_rehash(sub) -> None:
    reh = sub.add_parser("rehash", help="give old records their run identity (what ran and how it was judged)")
    reh.set_defaults(func=cmd_rehash)
