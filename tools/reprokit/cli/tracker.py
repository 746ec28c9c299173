"""The issue tracker, both ways: `tracker` (every linked pytorch/pytorch issue with the comment it needs) and
`tracker-states` (the issue states read from GitHub, into issue-states.yaml)."""

from __future__ import annotations

import argparse
from pathlib import Path

from reprokit.cli.common import OUT_HELP, root_of, store_of
from reprokit.contrib import tracker
from reprokit.run.request import load_root_matrix


def cmd_tracker(args: argparse.Namespace) -> int:
    root = root_of(args)
    data = tracker.Corpus.read(root, store_of(args, root).folder, load_root_matrix(root))
    if args.numbers:
        print("\n".join(str(n) for n in sorted({i.number for i in tracker.linked(data)})))
        return 0
    out = Path(args.report_dir).resolve() if args.report_dir else root / "reports" / "upstream"
    rows = tracker.drafts(data, out)
    for item, path, command in rows:
        print(f"#{item.number} {item.state} (checked {item.checked})  {item.cd.case.id}: {item.line()}")
        if path is not None:
            print(f"  draft: {path}\n  post:  {command}")
    needing = sum(1 for _, path, _ in rows if path is not None)
    print(f"{len(rows)} linked issues; {needing} need a comment (drafts from recorded runs; `reprokit upstream ID` "
          "makes one from a run now)")
    return 0


def add_tracker(sub) -> None:
    trk = sub.add_parser("tracker", help="every linked pytorch/pytorch issue, and a comment draft for each whose "
                                         "recorded runs disagree with its state")
    trk.add_argument("--out", help=OUT_HELP)
    trk.add_argument("--report-dir", metavar="DIR", help="write the drafts here (default: reports/upstream/)")
    trk.add_argument("--numbers", action="store_true", help="print only the linked issue numbers, one a line")
    trk.set_defaults(func=cmd_tracker)


def cmd_tracker_states(args: argparse.Namespace) -> int:
    path, taken = tracker.import_states(root_of(args), Path(args.source))
    print(f"updated {path} ({taken} issue states); `reprokit report` re-renders reports/upstream-issues.md")
    return 0


def add_tracker_states(sub) -> None:
    sts = sub.add_parser("tracker-states", help="take issue states read from GitHub into issue-states.yaml")
    sts.add_argument("--import", dest="source", required=True, metavar="FILE",
                     help="JSON lines with number and state (what `gh api repos/pytorch/pytorch/issues/N` prints)")
    sts.set_defaults(func=cmd_tracker_states)
