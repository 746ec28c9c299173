"""The issue tracker, both ways: `tracker` (every linked pytorch/pytorch issue with the comment it needs),
`tracker-states` (the issue states read from GitHub, into issue-states.yaml) and `triage` (an issue's own script run
on the releases, and what to say on it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reprokit.cli.common import OUT_HELP, root_of, store_of
from reprokit.model.choices import GH_FIELDS, TRIAGE_TIMEOUT


def cmd_tracker(args: argparse.Namespace) -> int:
    from reprokit.tracker.triage_command import tracker_lines
    from reprokit.tracker.triage_request import Request

    root = root_of(args)
    request = Request(releases=tuple(args.releases or ()), here=args.here, timeout=args.timeout)
    for line in tracker_lines(
        root,
        store_of(args, root).folder,
        request,
        numbers=args.numbers,
        report_dir=args.report_dir,
        issues_json=args.issues_json,
        log=lambda line: print(line, file=sys.stderr),
    ):
        print(line)
    return 0


def add_tracker(sub) -> None:
    trk = sub.add_parser(
        "tracker",
        help="every linked pytorch/pytorch issue, and a comment draft for each whose "
        "recorded runs disagree with its state",
    )
    trk.add_argument("--out", help=OUT_HELP)
    trk.add_argument("--report-dir", metavar="DIR", help="write the drafts here (default: reports/upstream/)")
    trk.add_argument("--numbers", action="store_true", help="print only the linked issue numbers, one a line")
    trk.add_argument(
        "--issues-json",
        metavar="DIR",
        help="issues as gh prints them, DIR/<number>.json: each linked "
        "issue not yet triaged is triaged from its own script first "
        "(no gh needed; standings kept in memory)",
    )
    trk.add_argument("--here", action="store_true", help="with --issues-json: run this environment's torch only")
    trk.add_argument("--releases", nargs="+", metavar="V", help="with --issues-json: exactly these releases")
    trk.add_argument("--timeout", type=float, default=TRIAGE_TIMEOUT, help="with --issues-json: seconds per run")
    trk.set_defaults(func=cmd_tracker)


def cmd_tracker_states(args: argparse.Namespace) -> int:
    from reprokit.tracker import linked

    path, taken = linked.import_states(root_of(args), Path(args.source))
    print(f"updated {path} ({taken} issue states); `reprokit report` re-renders reports/upstream-issues.md")
    return 0


def add_tracker_states(sub) -> None:
    sts = sub.add_parser("tracker-states", help="take issue states read from GitHub into issue-states.yaml")
    sts.add_argument(
        "--import",
        dest="source",
        required=True,
        metavar="FILE",
        help="JSON lines with number and state (what `gh api repos/pytorch/pytorch/issues/N` prints)",
    )
    sts.set_defaults(func=cmd_tracker_states)


def cmd_triage(args: argparse.Namespace) -> int:
    from reprokit.tracker.triage_command import triage_issue
    from reprokit.tracker.triage_request import Request

    request = Request(
        target=args.target,
        releases=tuple(args.releases or ()),
        here=args.here,
        nightly=args.nightly,
        since=args.since,
        reported=args.reported_release,
        timeout=args.timeout,
    )
    # progress (the releases, the builds) on stderr: stdout's first line is the standing
    return triage_issue(
        root_of(args),
        request,
        number=args.issue,
        issue_file=args.issue_json,
        report_dir=args.report_dir,
        record=args.record,
        log=lambda line: print(line, file=sys.stderr),
    )


def add_triage(sub) -> None:
    tri = sub.add_parser(
        "triage",
        help="run a pytorch/pytorch issue's own script, contained, on the releases and say "
        "whether it still reproduces (and draft the comment)",
    )
    tri.add_argument("issue", type=int, nargs="?", help="the issue number (read with gh)")
    tri.add_argument(
        "--issue-json", metavar="FILE", help=f"the issue as `gh issue view N --json {GH_FIELDS}` printed it"
    )
    tri.add_argument("--here", action="store_true", help="run only this environment's torch")
    tri.add_argument(
        "--releases",
        nargs="+",
        metavar="V",
        help="exactly these torch releases (or interpreters' "
        "paths); default: the release the issue reports and "
        "the target's newest stable",
    )
    tri.add_argument("--nightly", action="store_true", help="also run the nightly build")
    tri.add_argument(
        "--since",
        action="store_true",
        help="where two runs differ, bisect the target's recorded releases between them for the first that changed",
    )
    tri.add_argument(
        "--reported-release",
        metavar="V",
        help="the release the issue reports, where its text names none or the wrong one (default: its collect_env's)",
    )
    tri.add_argument(
        "--target",
        default="cpu",
        help="the hardware target: its device is what the script gets, its newest stable release is run (default: cpu)",
    )
    tri.add_argument("--timeout", type=float, default=TRIAGE_TIMEOUT, help="seconds per run (default: %(default)s)")
    tri.add_argument("--report-dir", metavar="DIR", help="write the draft here (default: reports/upstream/)")
    tri.add_argument(
        "--record",
        action="store_true",
        help="keep the standing in issue-states.yaml (for a linked "
        "issue): `tracker` drafts a comment only where it agrees",
    )
    tri.set_defaults(func=cmd_triage)


def cmd_tracker_link(args: argparse.Namespace) -> int:
    from reprokit.model.schema import InputError
    from reprokit.tracker import linked

    path = linked.record_link(root_of(args), args.issue, args.kind, args.why)
    if path is None:
        raise InputError(f"#{args.issue}: no case links it (issue-states.yaml has no such issue)")
    print(f"updated {path}: #{args.issue} {args.kind}")
    return 0


def add_tracker_link(sub) -> None:
    lnk = sub.add_parser(
        "tracker-link",
        help="say whether a linked case fails the way its issue reports (read from "
        "the issue's thread); a related one drafts no comment",
    )
    lnk.add_argument("issue", type=int)
    lnk.add_argument("kind", choices=["same", "related"])
    lnk.add_argument("--why", required=True, help="one line: what the issue reports and what the case tests")
    lnk.set_defaults(func=cmd_tracker_link)
