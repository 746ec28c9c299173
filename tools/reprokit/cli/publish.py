"""What is recorded and defined, shown: `report`, `site`, `list`, `targets`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reprokit.cli.common import reports_of, root_of, store_of


def cmd_report(args: argparse.Namespace) -> int:
    from reprokit.run import lifecycle
    from reprokit.run.request import load_root_matrix

    root = root_of(args)
    for path in lifecycle.render_reports(root, reports_of(args, root), load_root_matrix(root), store_of(args, root)):
        print(f"wrote {path}")
    return 0


def add_report(sub) -> None:
    rep = sub.add_parser("report", help="render reports/*.md from the recorded results")
    rep.add_argument("--out", help="folder holding results/ (the store) and reports/ (default: the repository's)")
    rep.set_defaults(func=cmd_report)


def cmd_site(args: argparse.Namespace) -> int:
    from reprokit.publish.site import website
    from reprokit.run.request import load_root_matrix
    from reprokit.store.store import Store

    root = root_of(args)
    written = website.build(
        root,
        Path(args.out).resolve(),
        load_root_matrix(root),
        Store(Path(args.results or root / "results").resolve()),
        site_url=args.site_url,
    )
    print(f"wrote {len(written)} files of the site under {args.out} (open index.html)")
    return 0


def add_site(sub) -> None:
    site = sub.add_parser("site", help="render the compatibility site (static HTML) from the recorded results")
    site.add_argument("--out", required=True, metavar="DIR", help="folder the site is written to")
    site.add_argument("--results", metavar="DIR", help="the results store to read (default: the repository's)")
    site.add_argument(
        "--site-url",
        metavar="URL",
        default=os.environ.get("REPROKIT_SITE_URL") or None,
        help="the address the site is published at, e.g. https://owner.github.io/repo/: the Atom "
        "feed's links start with it (default: $REPROKIT_SITE_URL; without it they are relative)",
    )
    site.set_defaults(func=cmd_site)


def cmd_list(args: argparse.Namespace) -> int:
    from reprokit.model import corpus

    lines, skipped = corpus.listing(root_of(args) / "cases", args.case)
    for line in lines:
        print(line)
    for message in skipped:
        print(message, file=sys.stderr)
    return 2 if skipped else 0


def add_list(sub) -> None:
    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("--case", action="append", default=[], metavar="GLOB")
    lst.set_defaults(func=cmd_list)


def cmd_targets(args: argparse.Namespace) -> int:
    from reprokit.model.matrix import targets_listing
    from reprokit.run.request import load_root_matrix

    for line in targets_listing(load_root_matrix(root_of(args)), args.exclude, args.json, args.only):
        print(line)
    return 0


def add_targets(sub) -> None:
    tgt = sub.add_parser("targets", help="list the hardware targets of matrix.yaml")
    tgt.add_argument("--json", action="store_true", help="as a GitHub Actions matrix")
    tgt.add_argument("--exclude", action="append", default=[], metavar="TARGET", help="leave this target out")
    tgt.add_argument("--only", action="append", default=[], metavar="TARGET", help="this target alone (repeat: these)")
    tgt.set_defaults(func=cmd_targets)
