"""`reprokit envs`: the torch environments built for other releases (`run --torch`, the history, bisect), their
sizes, and freeing them."""

from __future__ import annotations

import argparse

from reprokit.run import torch_envs


def cmd_envs(args: argparse.Namespace) -> int:
    if args.clear or args.remove:
        freed = torch_envs.remove(args.remove or [], everything=args.clear)
        print(f"freed {torch_envs.human_size(freed)} under {torch_envs.cache_root()}")
        return 0
    rows = torch_envs.listing()
    for name, size in rows:
        print(f"{name:>12}  {torch_envs.human_size(size)}")
    print(f"{'total':>12}  {torch_envs.human_size(sum(s for _, s in rows))} under {torch_envs.cache_root()} "
          "(--remove VERSION frees one environment, --clear all of them and uv's wheel cache)")
    return 0


def add_envs(sub) -> None:
    envs = sub.add_parser("envs", help="list the torch environments built for other releases, with their sizes; "
                                       "free them")
    envs.add_argument("--remove", nargs="+", metavar="VERSION", help="delete these releases' environments")
    envs.add_argument("--clear", action="store_true", help="delete every environment and uv's wheel cache")
    envs.set_defaults(func=cmd_envs)
