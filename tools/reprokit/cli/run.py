"""`run`, `where` and the container's `run-request`: one RunRequest from the options, one lifecycle call."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from reprokit.cli.common import TARGET_HELP, root_of

if TYPE_CHECKING:
    from reprokit.run.request import RunRequest


def request_of(args: argparse.Namespace) -> RunRequest:
    from reprokit.run.request import RunRequest

    where: Literal["auto", "host", "container"] = "host" if args.host else "container" if args.container else "auto"
    return RunRequest(
        root=root_of(args),
        target=args.target,
        suite=args.suite,
        cases=args.case,
        dtypes=args.dtype,
        smoke=args.smoke,
        shard=args.shard,
        jobs=args.jobs,
        jobs_per_gpu=args.jobs_per_gpu,
        timeout=args.timeout,
        out=Path(args.out).resolve() if args.out else None,
        cache=Path(args.cache).resolve() if args.cache else None,
        resume=args.resume,
        update_expected=args.update_expected,
        where=where,
        base_image=args.base_image,
        base_python=args.base_python,
        wheelhouse=Path(args.wheelhouse).resolve() if args.wheelhouse else None,
        force=args.force,
        deadline=args.deadline,
        warm=args.warm,
        render=not args.no_report,
        ladder=not args.no_ladder,
        python=args.python,
        torch=args.torch,
        skip_recorded=args.skip_recorded,
        torch_index=args.torch_index,
        repeat=args.repeat,
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", required=True, help=TARGET_HELP)
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="select cases (repeatable)")
    p.add_argument(
        "--dtype",
        action="append",
        default=[],
        metavar="DTYPE",
        help="only the runs in this dtype, e.g. float8_e4m3fn for the sweep's FP8 cells (repeatable)",
    )
    p.add_argument(
        "--suite",
        choices=["cases", "sweep"],
        default="cases",
        help="the repro corpus (default) or the model-structure sweep",
    )
    p.add_argument("--smoke", action="store_true", help="with --suite sweep: only the smoke subset")
    p.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic slices")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs (default: CPU cores)")
    p.add_argument(
        "--jobs-per-gpu",
        type=int,
        metavar="K",
        help="on accelerators: at most K runs at once on one device (each run sees only its own "
        "devices, the least loaded; default: no cap beyond --jobs)",
    )
    p.add_argument("--timeout", type=float, help="seconds; overrides every case's own timeout")
    p.add_argument(
        "--out", help="keep the store and reports under OUT/results and OUT/reports instead of the repository's"
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="keep inductor and Triton caches in DIR across runs (fast reruns of one case; the "
        "results say warm caches: published runs are cold)",
    )
    p.add_argument("--resume", action="store_true", help="skip runs already recorded (also a killed run's)")
    p.add_argument("--update-expected", action="store_true", help="accept the observed verdicts as expected")
    p.add_argument(
        "--host", action="store_true", help="run in this Python environment (the default where Docker is not running)"
    )
    p.add_argument("--container", action="store_true", help="run in the target's image (the default with Docker)")
    p.add_argument("--base-image", help="container mode: build FROM this image instead of matrix.yaml's")
    p.add_argument("--base-python", metavar="X.Y", help="the Python of --base-image (default: matrix.yaml's python)")
    p.add_argument("--wheelhouse", metavar="DIR", help="container mode: install every package from these wheels")
    p.add_argument("--force", action="store_true", help="run even if this machine is not the target's hardware")
    p.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="start no new run after this many seconds (runs in flight finish); --resume continues",
    )
    p.add_argument(
        "--warm",
        action="store_true",
        help="fork each run from a process that imported torch once (faster; published runs stay cold)",
    )
    p.add_argument(
        "--no-report",
        action="store_true",
        help="record results only (container mode renders outside). Without it the reports are "
        "rendered from the store, and a file is rewritten only where its content changed: a run of "
        "one case touches only the pages that show a change",
    )
    p.add_argument("--no-ladder", action="store_true", help="do not re-run failures on eager/aot_eager")
    p.add_argument(
        "--torch",
        metavar="VERSION",
        help="run this torch release (or 'nightly') in its own environment, built with uv (host mode)",
    )
    p.add_argument("--torch-index", metavar="URL", help="with --torch: the index to install it from")
    p.add_argument(
        "--skip-recorded",
        action="store_true",
        help="skip runs already recorded for this torch with the same case content (the history)",
    )
    p.add_argument("--python", help="interpreter that runs the cases (needs torch; default: this one; host mode)")
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each variant N times; runs that disagree are recorded as flaky (k of N failed as "
        "claimed). Without it a verdict that differs from the store's last one is run once more",
    )


def cmd_run(args: argparse.Namespace) -> int:
    from reprokit.run import lifecycle
    from reprokit.run.host_sitting import console_log

    req = request_of(args)
    lifecycle.refused_before_running(req)
    return lifecycle.run(req, log=console_log).exit_code


def add_run(sub) -> None:
    run = sub.add_parser("run", help="run the corpus on one target, record it in the store, render the reports")
    _run_options(run)
    run.set_defaults(func=cmd_run)


def cmd_where(args: argparse.Namespace) -> int:
    from reprokit.run import lifecycle

    print(lifecycle.placement(request_of(args)))
    return 0


def add_where(sub) -> None:
    whr = sub.add_parser("where", help="print where `run` with these options runs cases: host or container")
    _run_options(whr)
    whr.set_defaults(func=cmd_where)


def cmd_run_request(args: argparse.Namespace) -> int:
    from reprokit.run import lifecycle

    return lifecycle.run_request_json(args.request).exit_code


def add_run_request(sub) -> None:
    req = sub.add_parser("run-request", help=argparse.SUPPRESS)  # a container's runner: the whole request as JSON
    req.add_argument("request")
    req.set_defaults(func=cmd_run_request)
