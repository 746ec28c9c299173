"""`reprokit backlog`: every issue of a set triaged (a folder of gh-shaped files, or a gh query saved as one), one
shard at a time and resumable, and the shards merged into the list maintainers act on (docs/triage-and-upstream.md)."""

from __future__ import annotations

import argparse
import sys

from reprokit.cli.common import root_of
from reprokit.model.choices import TRIAGE_TIMEOUT


def cmd_backlog(args: argparse.Namespace) -> int:
    from reprokit.tracker.backlog_command import BacklogAsk, backlog

    ask = BacklogAsk(
        out=args.out,
        issues_json=args.issues_json,
        labels=tuple(args.label or ()),
        state=args.state,
        limit=args.limit,
        save=args.save,
        fetch_only=args.fetch_only,
        shard=args.shard,
        merge=tuple(args.merge or ()),
        previous=args.previous,
        target=args.target,
        releases=tuple(args.releases or ()),
        here=args.here,
        timeout=args.timeout,
        jobs=args.jobs,
        needs_gpu=args.needs_gpu,
    )
    return backlog(root_of(args), ask, log=lambda line: print(line, file=sys.stderr))


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number from 1")
    return int(text)


def add_backlog(sub) -> None:
    blg = sub.add_parser(
        "backlog",
        help="triage every issue of a set (a folder of gh-shaped files or a gh query), "
        "sharded and resumable, and render the list maintainers act on",
    )
    blg.add_argument("--issues-json", metavar="DIR", help="the issues as gh prints them, DIR/<number>.json")
    blg.add_argument(
        "--label",
        action="append",
        metavar="L",
        help="online: the issues with this label (repeat: all of them), listed and saved with gh first",
    )
    blg.add_argument(
        "--state", default="open", choices=("open", "closed", "all"), help="online: the issues' state (default: open)"
    )
    blg.add_argument("--limit", type=_positive, default=100, help="online: at most this many issues (default: 100)")
    blg.add_argument("--save", metavar="DIR", help="online: save the issues' files here (default: OUT/issues)")
    blg.add_argument("--fetch-only", action="store_true", help="online: save the issues' files and stop")
    blg.add_argument(
        "--shard",
        default="1/1",
        metavar="K/N",
        help="judge the K-th of N parts of the set, by issue number (default: 1/1, all)",
    )
    blg.add_argument(
        "--out",
        metavar="DIR",
        help="the journal (backlog.jsonl), the drafts and the list (backlog.md); "
        "an issue judged there before on the same text and releases is "
        "skipped",
    )
    blg.add_argument("--merge", nargs="+", metavar="DIR", help="merge these shards' --out folders into --out")
    blg.add_argument(
        "--previous",
        metavar="FILE",
        help="with --merge: the last merged backlog.jsonl, for the list's "
        '"changed since" (default: the one --out holds)',
    )
    blg.add_argument("--here", action="store_true", help="run only this environment's torch")
    blg.add_argument(
        "--releases",
        nargs="+",
        metavar="V",
        help="exactly these torch releases (or interpreters' paths); default: as triage chooses",
    )
    blg.add_argument("--target", default="cpu", help="the hardware target (default: cpu)")
    blg.add_argument(
        "--needs-gpu",
        action="store_true",
        help="only the issues whose script needs a CUDA GPU (a GPU runner's shard: merged, its judgement replaces a "
        "CPU shard's 'needs a CUDA GPU')",
    )
    blg.add_argument("--timeout", type=float, default=TRIAGE_TIMEOUT, help="seconds per run (default: %(default)s)")
    blg.add_argument("--jobs", type=_positive, help="issues judged at once (default: as cores and memory allow)")
    blg.set_defaults(func=cmd_backlog)
