"""Contributing and filing upstream: `new-case`, `validate`, `upstream`, `autofix`, `minify`."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from reprokit.cli.common import OUT_HELP, TARGET_HELP, case_of, root_of, store_of
from reprokit.model.choices import AREAS, CATEGORIES


def cmd_new_case(args: argparse.Namespace) -> int:
    from reprokit.contrib.new_case import Provenance
    from reprokit.contrib.new_case_command import scaffold

    root = root_of(args)
    provenance = Provenance(
        source=args.case_source,
        reported_on=args.reported_on,
        issue_state=args.issue_state,
        area=args.area,
        requires_torch=args.requires_torch,
        notes=args.notes,
        devices=tuple(d for d in (args.devices or "").split(",") if d),
    )
    print(
        scaffold(
            root,
            args.id,
            source=args.source,
            fixed=args.fixed,
            oracle_flags=(
                args.raises,
                args.match,
                args.stdout,
                args.stderr,
                args.hang,
                args.wrong_result,
                args.nonzero_exit,
            ),
            observe_run=not args.no_run,
            provenance=provenance,
            title=args.title,
            category=args.category,
            links=args.link,
            timeout=args.timeout,
        )
    )
    return 0


def add_new_case(sub) -> None:
    new = sub.add_parser("new-case", help="scaffold cases/ID, or make a case of a standalone repro script")
    new.add_argument("id", metavar="ID")
    new.add_argument(
        "--from",
        dest="source",
        metavar="SCRIPT.py",
        help="copy this script as repro.py, byte for byte, except where it draws random data with no "
        "seed and its oracle is wrong-result or is proposed by its run: then a seed call is "
        "inserted after its imports before that run (said when done)",
    )
    new.add_argument("--raises", metavar="CLASS", help="the bug reproduces when this exception is raised")
    new.add_argument(
        "--match",
        metavar="REGEX",
        help="... and its message matches this regex (alone: any exception whose message matches)",
    )
    new.add_argument("--stdout", metavar="REGEX", help="the bug reproduces when stdout matches")
    new.add_argument("--stderr", metavar="REGEX", help="the bug reproduces when stderr matches")
    new.add_argument("--hang", action="store_true", help="the bug is a hang: it reproduces past --timeout")
    new.add_argument("--timeout", type=int, help="seconds before a run is killed")
    new.add_argument(
        "--category",
        choices=CATEGORIES,
        help="default: --area's, else from its run here: the APIs the script calls, torch's message "
        "(a graph break's reason) and the failing stage (else diagnosis)",
    )
    new.add_argument(
        "--nonzero-exit",
        action="store_true",
        help="the bug reproduces when the script exits non-zero (the default oracle)",
    )
    new.add_argument("--link", action="append", default=[], metavar="URL", help="upstream issue (repeatable)")
    new.add_argument(
        "--title",
        help="default: the first line of the script's docstring, else what its run here "
        "observed (stage and exception, the mismatch, the hang)",
    )
    new.add_argument(
        "--wrong-result",
        action="store_true",
        help="the bug is a wrong result: the script compares with eager and an assertion fails",
    )
    new.add_argument("--fixed", metavar="SCRIPT.py", help="copy this script unchanged as fixed.py")
    new.add_argument(
        "--no-run",
        action="store_true",
        help="do not run --from SCRIPT once (by default, without an oracle flag, its failure here "
        "proposes the oracle: the exception class it raised and a stable prefix of the message)",
    )
    new.add_argument(
        "--source",
        dest="case_source",
        choices=["article", "sweep", "upstream"],
        help="where the case comes from (default: upstream when a --link is a pytorch/pytorch issue)",
    )
    new.add_argument(
        "--reported-on", metavar="VERSION", help="the torch version the issue reports (e.g. 2.1.0; default: unknown)"
    )
    new.add_argument(
        "--issue-state",
        choices=["open", "closed"],
        help="the issue's state today, from its page (default: unknown; the issue-states workflow fills it)",
    )
    new.add_argument("--area", choices=AREAS, help="the subsystem an upstream issue is about")
    new.add_argument("--requires-torch", metavar="SPEC", help="releases the script can run on, e.g. '>=2.4'")
    new.add_argument("--notes", help="free text: what the issue reports, what the fix is")
    new.add_argument(
        "--devices",
        metavar="LIST",
        help="comma-separated device kinds (cpu,cuda,rocm,npu); default: read from the script",
    )
    new.set_defaults(func=cmd_new_case)


def cmd_validate(args: argparse.Namespace) -> int:
    from reprokit.contrib import validate

    problems = validate.validate(root_of(args))
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "all cases, matrix.yaml, claims.yaml and the sweep are valid")
    return 1 if problems else 0


def add_validate(sub) -> None:
    val = sub.add_parser(
        "validate",
        help="check every case, matrix.yaml, claims.yaml and the sweep (runs nothing)",
        description="Check every input without running a case: each cases/*/case.yaml against its schema (unique "
        "ids, links), its scripts standalone (only torch and the standard library imported), each "
        "oracle's exception class present in the cpu target's pinned torch (this Python's where it is "
        "the pin, else the pin's environment built by `run --torch PIN`; without either, one problem "
        "names the classes not checked) and its `match` naming torch's own "
        "words, each claim of claims.yaml gated to the hardware it names, matrix.yaml and the sweep. "
        "Prints one line per problem (the file, the field, the fix); exits 1 when there is any, else 0.",
    )
    val.set_defaults(func=cmd_validate)


def cmd_upstream(args: argparse.Namespace) -> int:
    from reprokit.run.request import load_root_matrix
    from reprokit.tracker import upstream

    root = root_of(args)
    out = Path(args.report_dir).resolve() if args.report_dir else root / "reports" / "upstream"
    filed = upstream.draft(
        root,
        store_of(args, root).folder,
        load_root_matrix(root),
        args.id,
        args.target,
        out,
        force=args.force,
        search_json=Path(args.search_json) if args.search_json else None,
        issues_json=Path(args.issues_json).resolve() if args.issues_json else None,
        tlparse=shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent)),
    )
    for note in filed.notes:
        print(note, file=sys.stderr)
    print(f"wrote {filed.report} (a draft: read and check it before posting)")
    if filed.title:
        print(f"title: {filed.title}")
    for attachment in filed.attachments:
        print(f"attach {attachment} (drop it into the issue: gh cannot upload files)")
    for purpose, command in filed.commands:
        print(purpose)
        print(f"  {command}")
    return 0


def add_upstream(sub) -> None:
    ups = sub.add_parser(
        "upstream",
        help="run repro.py here as a maintainer would; write reports/upstream/ID.md, "
        "a ready-to-file PyTorch bug report, and print the gh commands",
    )
    ups.add_argument("id", metavar="ID")
    ups.add_argument("--target", default="cpu", help="whose device kind and dtypes the run uses (default cpu)")
    ups.add_argument("--out", help=OUT_HELP)
    ups.add_argument("--report-dir", metavar="DIR", help="write the report here (default: reports/upstream/)")
    ups.add_argument(
        "--issues-json",
        metavar="DIR",
        help="the linked issue as gh prints it, in DIR/<number>.json: "
        "triaged from its own script here where it was not yet "
        "(no gh needed)",
    )
    ups.add_argument(
        "--force",
        action="store_true",
        help="write it even if the case says the behaviour is documented or links a pytorch issue",
    )
    ups.add_argument(
        "--search-json",
        metavar="FILE",
        help="the duplicate search: what `gh search issues --json "
        "number,title,state,url,isPullRequest,body` printed "
        "(offline; default: run gh where it is installed); an open "
        "issue reporting the same failure refuses the report",
    )
    ups.set_defaults(func=cmd_upstream)


def cmd_autofix(args: argparse.Namespace) -> int:
    from reprokit.contrib import autofix

    for line in autofix.propose_recorded(root_of(args), args.target, args.results, remote=args.remote, push=args.push):
        print(line)
    return 0


def add_autofix(sub) -> None:
    fix = sub.add_parser("autofix", help="one branch (and with --push a PR) per case whose verdict changed")
    fix.add_argument("--target", required=True, help=TARGET_HELP)
    fix.add_argument("--results", required=True, metavar="DIR", help="a results store folder (e.g. out/results)")
    fix.add_argument("--remote", default="origin")
    fix.add_argument("--push", action="store_true", help="push the branches and open PRs (gh)")
    fix.set_defaults(func=cmd_autofix)


def cmd_minify(args: argparse.Namespace) -> int:
    from reprokit.tracker.drafting import minify

    root = root_of(args)
    path = minify.minify_as_recorded(case_of(root, args.id), store_of(args, root).load(args.target, "cases"))
    print(f"wrote {path.relative_to(root)} and {path.with_name('MINIFIED.md').relative_to(root)}")
    return 0


def add_minify(sub) -> None:
    mini = sub.add_parser("minify", help="run PyTorch's minifier on a failing case; keeps minified_repro.py")
    mini.add_argument("id", metavar="ID")
    mini.add_argument("--target", default="cpu", help="whose recorded stage picks dynamo or aot (default cpu)")
    mini.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    mini.set_defaults(func=cmd_minify)
