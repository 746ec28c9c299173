"""The issue tracker, both ways: `tracker` (every linked pytorch/pytorch issue with the comment it needs),
`tracker-states` (the issue states read from GitHub, into issue-states.yaml) and `triage` (an issue's own script run
on the releases, and what to say on it)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from reprokit.cli.common import OUT_HELP, root_of, store_of
from reprokit.model.schema import InputError
from reprokit.run.request import load_root_matrix, target_of
from reprokit.tracker import linked, offline_triage, triage
from reprokit.tracker.issue import issue_json
from reprokit.tracker.judging import triage_standing


def cmd_tracker(args: argparse.Namespace) -> int:
    root = root_of(args)
    matrix = load_root_matrix(root)
    data = linked.Corpus.read(root, store_of(args, root).folder, matrix)
    if args.numbers:
        print("\n".join(str(n) for n in sorted({i.number for i in linked.linked(data)})))
        return 0
    out = Path(args.report_dir).resolve() if args.report_dir else root / "reports" / "upstream"
    if args.issues_json:  # the issues not yet triaged, from their own scripts, without gh
        request = triage.Request(matrix, "cpu", tuple(args.releases or ()), args.here, timeout=args.timeout)
        data = offline_triage.with_triages(data, Path(args.issues_json).resolve(), request, out,
                                           log=lambda line: print(line, file=sys.stderr))
    rows = linked.drafts(data, out)
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
    trk.add_argument("--issues-json", metavar="DIR", help="issues as gh prints them, DIR/<number>.json: each linked "
                                                          "issue not yet triaged is triaged from its own script first "
                                                          "(no gh needed; standings kept in memory)")
    trk.add_argument("--here", action="store_true", help="with --issues-json: run this environment's torch only")
    trk.add_argument("--releases", nargs="+", metavar="V", help="with --issues-json: exactly these releases")
    trk.add_argument("--timeout", type=float, default=triage.TIMEOUT, help="with --issues-json: seconds per run")
    trk.set_defaults(func=cmd_tracker)


def cmd_tracker_states(args: argparse.Namespace) -> int:
    path, taken = linked.import_states(root_of(args), Path(args.source))
    print(f"updated {path} ({taken} issue states); `reprokit report` re-renders reports/upstream-issues.md")
    return 0


def add_tracker_states(sub) -> None:
    sts = sub.add_parser("tracker-states", help="take issue states read from GitHub into issue-states.yaml")
    sts.add_argument("--import", dest="source", required=True, metavar="FILE",
                     help="JSON lines with number and state (what `gh api repos/pytorch/pytorch/issues/N` prints)")
    sts.set_defaults(func=cmd_tracker_states)


def cmd_triage(args: argparse.Namespace) -> int:
    root = root_of(args)
    if args.issue is None and not args.issue_json:
        raise InputError("triage: give the issue number, or --issue-json FILE")
    issue = issue_json.read(Path(args.issue_json)) if args.issue_json else triage.from_gh(args.issue)
    if args.issue is not None and issue.number != args.issue:
        print(f"reprokit: {args.issue_json} is issue #{issue.number}, not #{args.issue}")
        return 2
    matrix = load_root_matrix(root)
    target_of(matrix, args.target)
    if args.here and args.releases:
        raise InputError("triage: --here runs this torch alone; --releases names others: give one of them")
    out = Path(args.report_dir).resolve() if args.report_dir else root / "reports" / "upstream"
    request = triage.Request(matrix, args.target, tuple(args.releases or ()), args.here, args.nightly, args.since,
                             args.reported_release, args.timeout)
    # progress (the releases, the builds) on stderr: stdout's first line is the standing
    done = triage.triage(issue, request, out, ours=(root.resolve(),), log=lambda line: print(line, file=sys.stderr))
    print(done.standing.line())
    t = done.triage
    if t.signature is not None:
        print(f"  signature (torch {t.observed_on}; {t.source()}): "
              f"{t.signature.line()}" + (f"; {t.confirmed}" if t.confirmed else ""))
    for ran in done.runs:
        print(f"  torch {ran.release}: {ran.why or triage_standing.observed_line(ran.obs)}")
    if args.record:
        path = linked.record_triage(root, issue.number, t.record_line(), t.observed_on or "none run", t.standing)
        print(f"  recorded in {path}" if path else f"  not recorded: no case links #{issue.number}")
    if done.draft is not None:
        command = shlex.join(["gh", "issue", "comment", str(issue.number), "--repo", "pytorch/pytorch",
                              "--body-file", str(done.draft)])
        print(f"  draft: {done.draft} (open it, write your own words on its first line)\n  post:  {command}")
    return 0


def add_triage(sub) -> None:
    tri = sub.add_parser("triage", help="run a pytorch/pytorch issue's own script, contained, on the releases and say "
                                        "whether it still reproduces (and draft the comment)")
    tri.add_argument("issue", type=int, nargs="?", help="the issue number (read with gh)")
    tri.add_argument("--issue-json", metavar="FILE", help="the issue as `gh issue view N --json "
                                                          f"{triage.GH_FIELDS}` printed it")
    tri.add_argument("--here", action="store_true", help="run only this environment's torch")
    tri.add_argument("--releases", nargs="+", metavar="V", help="exactly these torch releases (or interpreters' "
                                                                "paths); default: the release the issue reports and "
                                                                "the target's newest stable")
    tri.add_argument("--nightly", action="store_true", help="also run the nightly build")
    tri.add_argument("--since", action="store_true", help="where two runs differ, bisect the target's recorded "
                                                          "releases between them for the first that changed")
    tri.add_argument("--reported-release", metavar="V", help="the release the issue reports, where its text names "
                                                             "none or the wrong one (default: its collect_env's)")
    tri.add_argument("--target", default="cpu", help="the hardware target: its device is what the script gets, its "
                                                     "newest stable release is run (default: cpu)")
    tri.add_argument("--timeout", type=float, default=triage.TIMEOUT, help="seconds per run (default: %(default)s)")
    tri.add_argument("--report-dir", metavar="DIR", help="write the draft here (default: reports/upstream/)")
    tri.add_argument("--record", action="store_true", help="keep the standing in issue-states.yaml (for a linked "
                                                           "issue): `tracker` drafts a comment only where it agrees")
    tri.set_defaults(func=cmd_triage)


def cmd_tracker_link(args: argparse.Namespace) -> int:
    path = linked.record_link(root_of(args), args.issue, args.kind, args.why)
    if path is None:
        raise InputError(f"#{args.issue}: no case links it (issue-states.yaml has no such issue)")
    print(f"updated {path}: #{args.issue} {args.kind}")
    return 0


def add_tracker_link(sub) -> None:
    lnk = sub.add_parser("tracker-link", help="say whether a linked case fails the way its issue reports (read from "
                                              "the issue's thread); a related one drafts no comment")
    lnk.add_argument("issue", type=int)
    lnk.add_argument("kind", choices=["same", "related"])
    lnk.add_argument("--why", required=True, help="one line: what the issue reports and what the case tests")
    lnk.set_defaults(func=cmd_tracker_link)
