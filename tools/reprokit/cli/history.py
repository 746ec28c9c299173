"""The store's history: `history`, `bisect`, `versions`, `changed-cases`, `import`, `accept`, `forget`, `rehash`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reprokit.cli.common import OUT_HELP, TARGET_HELP, root_of, store_of


def cmd_history(args: argparse.Namespace) -> int:
    from reprokit.store.views import history_text

    root = root_of(args)
    print(history_text(store_of(args, root).load(args.target, args.suite), args.case, args.torch, args.json))
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
    from reprokit.contrib.bisect_command import BisectAsk, bisect
    from reprokit.run.request import RunRequest

    req = RunRequest(
        root=root_of(args),
        target=args.target,
        where="host",
        render=False,
        jobs=args.jobs,
        out=Path(args.out).resolve() if args.out else None,
        torch_index=args.torch_index,
        wheelhouse=Path(args.wheelhouse).resolve() if args.wheelhouse else None,
        force=args.force,
        timeout=args.timeout,
    )
    oracle_flags = (args.raises, args.match, args.stdout, args.stderr, args.hang, args.wrong_result, args.nonzero_exit)
    return bisect(
        req,
        BisectAsk(
            args.id,
            args.source,
            args.versions,
            not args.no_between,
            oracle_flags,
            args.keep,
            args.timeout,
            args.max_envs,
        ),
        log=lambda line: print(line, flush=True),
    )


def add_bisect(sub) -> None:
    bis = sub.add_parser("bisect", help="find the torch releases where a case's verdict changes (recorded first)")
    bis.add_argument("id", metavar="ID", nargs="?")
    bis.add_argument("--target", required=True, help=TARGET_HELP)
    bis.add_argument(
        "--versions",
        nargs="+",
        metavar="V",
        help="releases to search (default: pins.history); the history releases between them are "
        "searched too, unless --no-between",
    )
    bis.add_argument(
        "--no-between",
        action="store_true",
        help="search only the --versions given (the answer names the releases in between not tested)",
    )
    bis.add_argument("--torch-index", metavar="URL", help="the index to install torch from (e.g. the nightly one)")
    bis.add_argument("--wheelhouse", metavar="DIR", help="install torch from these wheels (offline)")
    bis.add_argument("--jobs", type=int, default=2)
    bis.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    bis.add_argument("--out", help=OUT_HELP)
    bis.add_argument(
        "--from",
        dest="source",
        metavar="SCRIPT.py",
        help="bisect this script (your own repro) instead of a case; nothing is added without --keep",
    )
    bis.add_argument("--keep", action="store_true", help="with --from: add the script as case ID (its runs recorded)")
    bis.add_argument("--raises", metavar="CLASS", help="with --from: the bug reproduces when this exception is raised")
    bis.add_argument("--match", metavar="REGEX", help="with --from: ... and its message matches this regex")
    bis.add_argument("--stdout", metavar="REGEX", help="with --from: the bug reproduces when stdout matches")
    bis.add_argument("--stderr", metavar="REGEX", help="with --from: the bug reproduces when stderr matches")
    bis.add_argument("--hang", action="store_true", help="with --from: the bug is a hang (past --timeout)")
    bis.add_argument(
        "--wrong-result",
        action="store_true",
        help="with --from: the bug is a wrong result (an assertion in the script fails)",
    )
    bis.add_argument(
        "--nonzero-exit", action="store_true", help="with --from: the bug reproduces when the script exits non-zero"
    )
    bis.add_argument("--timeout", type=int, help="seconds before a run is killed (default: the case's own)")
    bis.add_argument(
        "--max-envs",
        type=int,
        metavar="N",
        help="build at most N torch environments (each a few GB); the answer says where it stopped",
    )
    bis.set_defaults(func=cmd_bisect)


def cmd_versions(args: argparse.Namespace) -> int:
    """A target's history releases, as a GitHub Actions matrix with --json (one job per release)."""
    from reprokit.run.request import load_root_matrix, target_of

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
    from reprokit.model import corpus

    ids = corpus.changed_since(root_of(args), args.base)
    print(" ".join(f"--case={i}" for i in ids) if args.as_args else "\n".join(ids))
    return 0


def add_changed_cases(sub) -> None:
    chg = sub.add_parser("changed-cases", help="case ids changed since a git ref (for pull requests)")
    chg.add_argument("--base", required=True, metavar="REF")
    chg.add_argument("--as-args", action="store_true", help="print them as --case=ID arguments for `run`")
    chg.set_defaults(func=cmd_changed_cases)


def cmd_import(args: argparse.Namespace) -> int:
    """Merge results recorded elsewhere (a store folder, or a results.json of the layout before the store)."""
    from reprokit.run import rejudge

    root = root_of(args)
    refused = rejudge.import_sources(
        store_of(args, root), args.source, root, say=print, warn=lambda line: print(line, file=sys.stderr)
    )
    return 1 if refused else 0


def add_import(sub) -> None:
    imp = sub.add_parser("import", help="merge results recorded elsewhere into the store (no re-run)")
    imp.add_argument("source", nargs="+", metavar="PATH", help="a results store folder or a legacy results.json")
    imp.add_argument("--out", help=OUT_HELP)
    imp.set_defaults(func=cmd_import)


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a target's recorded verdicts of its pinned release (e.g. results brought back) as its expected state."""
    from reprokit.run.request import load_root_matrix, target_of
    from reprokit.store import expected

    root = root_of(args)
    pin = target_of(load_root_matrix(root), args.target).pins.torch
    count, path = expected.accept_recorded(
        root, store_of(args, root).load(args.target, args.suite), args.target, args.suite, pin
    )
    print(f"accepted {count} recorded verdicts into {path.relative_to(root)}")
    return 0


def add_accept(sub) -> None:
    acc = sub.add_parser("accept", help="accept a target's recorded verdicts as its expected state (no run)")
    acc.add_argument("--target", required=True, help=TARGET_HELP)
    acc.add_argument("--suite", choices=["cases", "sweep"], default="cases")
    acc.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    acc.set_defaults(func=cmd_accept)


def cmd_forget(args: argparse.Namespace) -> int:
    """Drop recorded runs of one torch (e.g. made with a harness since fixed); `run --resume` runs them again."""
    dropped = store_of(args, root_of(args)).forget_keys(args.target, args.suite, args.torch, args.key)
    print(
        f"dropped {dropped} records; `reprokit run --target {args.target} --suite {args.suite} --resume` runs "
        "them again"
    )
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
    from reprokit.store import rehash

    counts = rehash.rehash(root_of(args))
    print(", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "no record has a case_hash")
    return 0


def add_rehash(sub) -> None:
    reh = sub.add_parser("rehash", help="give old records their run identity (what ran and how it was judged)")
    reh.set_defaults(func=cmd_rehash)
