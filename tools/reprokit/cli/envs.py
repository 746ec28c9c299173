"""`reprokit envs`: the torch environments built for other releases (`run --torch`, the history, bisect), their
sizes, and freeing them."""

from __future__ import annotations

import argparse


def cmd_envs(args: argparse.Namespace) -> int:
    from reprokit.run import env_cache

    if args.clear or args.remove:
        print(env_cache.free(args.remove or [], everything=args.clear))
    else:
        print("\n".join(env_cache.table()))
    return 0


def add_envs(sub) -> None:
    envs = sub.add_parser(
        "envs", help="list the torch environments built for other releases, with their sizes; free them"
    )
    envs.add_argument(
        "--remove",
        nargs="+",
        metavar="VERSION",
        help="delete these releases' environments and the cached wheels no other environment uses",
    )
    envs.add_argument("--clear", action="store_true", help="delete every environment and uv's wheel cache")
    envs.set_defaults(func=cmd_envs)
