"""The targets' images: `images` (render the Dockerfiles), `image` (build one), `wheelhouse`."""

from __future__ import annotations

import argparse
from pathlib import Path

from reprokit.cli.common import TARGET_HELP, root_of


def cmd_images(args: argparse.Namespace) -> int:
    from reprokit.images import dockerfiles
    from reprokit.run.request import load_root_matrix

    root = root_of(args)
    for path in dockerfiles.write_all(
        root / "images", Path(args.out or root / "images" / "rendered"), load_root_matrix(root).targets
    ):
        print(f"wrote {path}")
    return 0


def add_images(sub) -> None:
    ims = sub.add_parser("images", help="render every target's Dockerfile into images/rendered/")
    ims.add_argument("--out", help="folder for the rendered Dockerfiles")
    ims.set_defaults(func=cmd_images)


def cmd_image(args: argparse.Namespace) -> int:
    from reprokit.images import dockerfiles
    from reprokit.run.request import load_root_matrix, target_of

    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    image = dockerfiles.build(
        root / "images",
        args.target,
        target,
        args.base_image,
        Path(args.wheelhouse).resolve() if args.wheelhouse else None,
        args.base_python,
        log=lambda line: print(line, flush=True),
    )
    if args.record:
        dockerfiles.record(
            Path(args.record),
            image,
            args.target,
            args.base_image or target.base_image,
            args.base_python or target.python,
            Path(args.wheelhouse) if args.wheelhouse else None,
        )
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
    from reprokit.images import wheel_download
    from reprokit.run.request import load_root_matrix, target_of

    root = root_of(args)
    target = target_of(load_root_matrix(root), args.target)
    return wheel_download.download(
        Path(args.dest).resolve(),
        args.target,
        target,
        args.base_python,
        args.torch_index,
        log=lambda line: print(line, flush=True),
    )


def add_wheelhouse(sub) -> None:
    whl = sub.add_parser("wheelhouse", help="download the wheels a target's image installs (for --wheelhouse)")
    whl.add_argument("--target", required=True, help=TARGET_HELP)
    whl.add_argument(
        "--base-python",
        metavar="X.Y",
        help="the Python of the base image the wheels are for (default: matrix.yaml's python)",
    )
    whl.add_argument(
        "--torch-index",
        metavar="URL",
        help="the index torch comes from (default: the target's where it is reachable, else pip's configuration)",
    )
    whl.add_argument("dest", metavar="DIR")
    whl.set_defaults(func=cmd_wheelhouse)
