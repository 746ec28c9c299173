"""`reprokit envs`: the torch environments built for other releases (`run --torch`, the history, bisect), their
sizes, and freeing them."""

from __future__ import annotations

import argparse

from reprokit.run import env_cache


def cmd_envs(args: argparse.Namespace) -> int:
    human = env_cache.human_size
    if args.clear or args.remove:
        freed = env_cache.remove(args.remove or [], everything=args.clear)
        archives = f" and {freed.archives} archives of uv's cache no environment links any more" if freed.archives else ""
        print(f"removed {', '.join(args.remove) if not args.clear else 'every environment and uv cache'}{archives} "
              f"under {env_cache.cache_root()}: freed {human(freed.counted)} (files whose last link went); "
              f"df: {human(max(freed.df, 0))} more free (other writers on this disk move that figure too)")
        return 0
    print(f"{'torch':>12}  {'size':>10}  {'frees':>10}")
    for row in env_cache.listing():
        frees = human(row.frees) if row.frees is not None else "-"
        print(f"{row.name:>12}  {human(row.size):>10}  {frees:>10}")
    print(f"{'':>12}  size: each file counted once, though environments share files (hard links into uv's cache), "
          "so the sizes add up to more than the total; frees: what --remove VERSION gives back (the files no other "
          f"environment links); --clear frees the total. Under {env_cache.cache_root()} ($REPROKIT_CACHE)")
    return 0


def add_envs(sub) -> None:
    envs = sub.add_parser("envs", help="list the torch environments built for other releases, with their sizes; "
                                       "free them")
    envs.add_argument("--remove", nargs="+", metavar="VERSION",
                      help="delete these releases' environments and the cached wheels no other environment uses")
    envs.add_argument("--clear", action="store_true", help="delete every environment and uv's wheel cache")
    envs.set_defaults(func=cmd_envs)
