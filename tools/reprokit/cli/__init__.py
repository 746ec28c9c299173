"""The `reprokit` command line: it parses arguments and makes one call per sub-command; nox sessions call it."""

from __future__ import annotations

import argparse
import os
import sys

from reprokit import __version__
from reprokit.cli import contrib, envs, history, images, publish, run, tracker
from reprokit.cli.safe_output import LineGuard
from reprokit.model.schema import InputError

# The sub-commands in the order `reprokit --help` lists them; each group module adds its own and parses nothing else.
COMMANDS = (
    run.add_run,
    run.add_where,
    run.add_run_request,
    history.add_history,
    history.add_bisect,
    envs.add_envs,
    history.add_versions,
    history.add_changed_cases,
    history.add_import,
    history.add_accept,
    history.add_forget,
    history.add_rehash,
    contrib.add_new_case,
    contrib.add_validate,
    contrib.add_upstream,
    tracker.add_tracker,
    tracker.add_tracker_states,
    tracker.add_tracker_link,
    tracker.add_triage,
    contrib.add_autofix,
    images.add_images,
    images.add_image,
    images.add_wheelhouse,
    contrib.add_minify,
    publish.add_report,
    publish.add_site,
    publish.add_list,
    publish.add_targets,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reprokit", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("--root", default=None,
                        help="repository root (default: the nearest folder holding matrix.yaml, from the current "
                             "directory up)")
    sub = parser.add_subparsers(dest="command", required=True)
    plain_add = sub.add_parser

    def add_parser(name: str, **kwargs):  # `reprokit X --help` says what X does: its one line, unless it says more
        if kwargs.get("help") not in (None, argparse.SUPPRESS):
            kwargs.setdefault("description", kwargs["help"])
        return plain_add(name, **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = LineGuard(sys.stdout), LineGuard(sys.stderr)  # lines may hold what a case controls
    try:
        return _dispatch(build_parser().parse_args(argv))
    except BrokenPipeError:  # `reprokit history --json | head`: the reader left, nothing is wrong
        return 141
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BrokenPipeError:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        sys.stdout, sys.stderr = saved


def _dispatch(args: argparse.Namespace) -> int:
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
