"""The `reprokit` command line: it parses arguments and makes one call per sub-command; nox sessions call it.

Building the parser imports the cli modules and argparse only: each sub-command imports what it runs with (pydantic,
the tracker, jinja2, ...) inside its `cmd_*`, so that `reprokit --help` and `reprokit X --help` answer at once."""

from __future__ import annotations

import argparse
import os
import sys

from reprokit import __version__
from reprokit.cli import backlog, contrib, envs, history, images, publish, run, tracker
from reprokit.cli.safe_output import LineGuard

# The exit statuses every sub-command shares (`reprokit --help` says them; a command's own help says what its 1 means).
INPUT_ERROR, ENVIRONMENT_ERROR, INTERRUPTED = 2, 3, 130
EXIT_CODES = (
    "exit status: 0 done; 1 a check failed (see the command's help); 2 bad input (arguments, case files); "
    "3 this machine (torch, docker, bwrap, uv, gh, disk, network); 130 interrupted"
)

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
    backlog.add_backlog,
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
    parser = argparse.ArgumentParser(prog="reprokit", description=__doc__.split("\n\n")[0], epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument(
        "--root",
        default=None,
        help="repository root (default: the nearest folder holding matrix.yaml, from the current directory up)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    plain_add, listed = sub.add_parser, []

    def add_parser(name: str, **kwargs):  # `reprokit X --help` says what X does: its one line, unless it says more
        if kwargs.get("help") is argparse.SUPPRESS:  # internal: argparse would list it as "==SUPPRESS==", so no help
            del kwargs["help"]
        elif kwargs.get("help") is not None:
            kwargs.setdefault("description", kwargs["help"])
            listed.append(name)
        return plain_add(name, **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for add in COMMANDS:
        add(sub)
    sub.metavar = "{" + ",".join(listed) + "}"  # the usage line and the listing name the public commands only
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
    """Run the command; what it refuses is one line and a status: 3 where this machine is what must change (an
    EnvironmentProblem, a kind of InputError), 2 where the input is. Imported here, after parsing, since the schema
    imports pydantic, which `--help` never needs."""
    from reprokit.model.schema import EnvironmentProblem, InputError

    try:
        return args.func(args)
    except EnvironmentProblem as err:
        print(f"reprokit: {err}", file=sys.stderr)
        return ENVIRONMENT_ERROR
    except InputError as err:
        print(f"reprokit: {err}", file=sys.stderr)
        return INPUT_ERROR
    except KeyboardInterrupt:
        print("reprokit: interrupted", file=sys.stderr)
        return INTERRUPTED


def main_exit() -> None:
    sys.exit(main())
