"""The targets' images: `images` (render the Dockerfiles), `image` (build one), `wheelhouse`."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from reprokit.cli.common import TARGET_HELP, root_of
from reprokit.images import dockerfiles, wheelhouse
from reprokit.run.request import load_root_matrix, target_of


def cmd_images(args: argparse.Namespace) -> int:
    root = root_of(args)
    for path in dockerfiles.write_all(root / "images", Path(args.out or root / "images" / "rendered"),
                                 load_root_matrix(root).targets):
        print(f"wrote {path}")
    return 0


def add_images(sub) -> None:
    ims = sub.add_parser("images", help="render every target's Dockerfile into images/rendered/")
    ims.add_argument("--out", help="folder for the rendered Dockerfiles")
    ims.set_defaults(func=cmd_images)


def cmd_image(args: argparse.Namespace) -> int:
    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    image = dockerfiles.build(root / "images", args.target, target, args.base_image,
                         Path(args.wheelhouse).resolve() if args.wheelhouse else None, args.base_python,
                         log=lambda line: print(line, flush=True))
    if args.record:
        dockerfiles.record(Path(args.record), image, args.target, args.base_image or target.base_image,
                      args.base_python or target.python, Path(args.wheelhouse) if args.wheelhouse else None)
        print(f"wrote {args.record}")
    print(image.tag)
    return 0


def add_image(sub) -> None:
    img = sub.add_parser("image", help="build one target's image with the docker SDK (reused if unchanged)")
    img.add_argument("--target", required=True, help=TARGET_HELP)
    img.add_argument("--base-image", help="build FROM this image instead of matrix.yaml's")
    img.add_argument("--base-python", metavar="X.Y", help="the Python of --base-image (default: matrix.yaml's python)")
    img.add_argument("--wheelhouse", metavar="DIR", help="install every Python package from these wheels (offline)")
    img.add_argument("--record", metavar="FILE.json", help="write the image's tag, id, size and build time here")
    img.set_defaults(func=cmd_image)


def cmd_wheelhouse(args: argparse.Namespace) -> int:
    """Download every package a target's image installs, for `--wheelhouse` builds on air-gapped machines."""
    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    dest, python = Path(args.dest).resolve(), dockerfiles.python_of(target, args.base_python)
    index = args.torch_index or target.pins.index_url
    if not args.torch_index and index and not wheelhouse.index_reachable(index):
        print(f"{index} is not reachable from here: torch comes from this machine's pip configuration", flush=True)
        index = None
    for command in wheelhouse.download_commands(dockerfiles.torch_packages(target), dockerfiles.packages(target), dest, python,
                                                index):
        print(" ".join(command), flush=True)
        code = subprocess.run(command, check=False).returncode
        if code:
            return code
    wheelhouse.check(dest, args.target, target)
    print(f"{dest}: the wheels of {args.target}'s image (torch {target.pins.torch}, Python {python}); "
          f"build with --wheelhouse {dest}" + (f" --base-python {python}" if args.base_python else ""))
    return 0


def add_wheelhouse(sub) -> None:
    whl = sub.add_parser("wheelhouse", help="download the wheels a target's image installs (for --wheelhouse)")
    whl.add_argument("--target", required=True, help=TARGET_HELP)
    whl.add_argument("--base-python", metavar="X.Y", help="the Python of the base image the wheels are for "
                                                          "(default: matrix.yaml's python)")
    whl.add_argument("--torch-index", metavar="URL", help="the index torch comes from (default: the target's where it is "
                                                            "reachable, else pip's configuration)")
    whl.add_argument("dest", metavar="DIR")
    whl.set_defaults(func=cmd_wheelhouse)
