"""Render one Dockerfile per target from images/<family>.Dockerfile.j2, and build it with the docker SDK.

The tag is content-addressed (templates + the target's matrix entry + the package pins), so an unchanged image is
never rebuilt. Values reach the templates only after matrix.yaml validation (single tokens: nothing can add a line).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import jinja2

from .schema import InputError, Target, Token, conforms

# The runner's own dependencies inside every image, pinned.
RUNNER_PACKAGES = ["pydantic==2.13.4", "PyYAML==6.0.3", "tabulate==0.10.0", "rich==15.0.0", "Jinja2==3.1.6",
                   "matplotlib==3.11.2", "numpy==2.4.6"]
SELF_TEST = {"cpu": "", "cuda": "; print('cuda', torch.version.cuda, 'devices visible', torch.cuda.device_count())",
             "rocm": "; print('hip', torch.version.hip)",
             "ascend": "; import torch_npu; print('torch_npu', torch_npu.__version__)"}


def packages(target: Target) -> list[str]:
    pins = [f"torch=={target.pins.torch}"]
    if target.pins.triton:
        pins.append(f"triton=={target.pins.triton}")
    if target.pins.torch_npu:
        pins.append(f"torch-npu=={target.pins.torch_npu}")
    return pins + list(target.pins.extras) + RUNNER_PACKAGES


def _environment(templates: Path) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)


def image_tag(templates: Path, name: str, target: Target, base_image: str, wheelhouse: bool) -> str:
    digest = hashlib.sha256()
    for path in sorted(templates.glob("*.j2")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    # What goes into the image: the target less its history list (other releases run outside any image).
    built = target.model_dump(mode="json", exclude={"pins": {"history"}})
    digest.update(json.dumps([name, built, base_image, wheelhouse, packages(target)], sort_keys=True).encode())
    return f"reprokit/{name}:{digest.hexdigest()[:12]}"


def render(templates: Path, name: str, target: Target, base_image: str | None = None, wheelhouse: bool = False) -> str:
    base = base_image or target.base_image
    if base_image is not None and not conforms(Token, base_image):
        raise InputError(f"--base-image {base_image!r}: one image reference (a single token: no spaces, no newlines)")
    template = _environment(templates).get_template(f"{target.family}.Dockerfile.j2")
    return template.render(target=name, family=target.family, description=target.description, base_image=base,
                           pins=target.pins, packages=packages(target), wheelhouse=wheelhouse,
                           tag=image_tag(templates, name, target, base, wheelhouse),
                           self_test=SELF_TEST[target.family])


def write_all(templates: Path, out: Path, targets: dict[str, Target]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, target in targets.items():
        path = out / f"{name}.Dockerfile"
        path.write_text(render(templates, name, target), encoding="utf-8")
        written.append(path)
    return written


def build(templates: Path, name: str, target: Target, base_image: str | None = None,
          wheelhouse: Path | None = None, log=print) -> str:
    """Build the target's image unless an image with its content tag exists; returns the tag."""
    import docker
    from docker.errors import BuildError, DockerException, ImageNotFound

    base = base_image or target.base_image
    tag = image_tag(templates, name, target, base, wheelhouse is not None)
    try:
        client = docker.from_env()
        client.images.get(tag)
        log(f"{tag}: up to date (nothing changed), not rebuilt")
        return tag
    except ImageNotFound:
        pass
    except DockerException as err:
        raise InputError(f"docker: cannot reach the engine ({err}); start it or use --host") from None
    context = Path(tempfile.mkdtemp(prefix="reprokit-image-"))
    try:
        (context / "Dockerfile").write_text(render(templates, name, target, base_image, wheelhouse is not None))
        if wheelhouse is not None:
            if not wheelhouse.is_dir():
                raise InputError(f"--wheelhouse {wheelhouse}: no such folder")
            (context / "wheelhouse").mkdir()
            for wheel in wheelhouse.glob("*.whl"):
                try:
                    os.link(wheel, context / "wheelhouse" / wheel.name)
                except OSError:
                    shutil.copy(wheel, context / "wheelhouse" / wheel.name)
        log(f"{tag}: building from {base}")
        try:
            client.images.build(path=str(context), tag=tag, buildargs={"BASE_IMAGE": base}, forcerm=True, rm=True,
                                network_mode="host")
        except BuildError as err:
            tail = [line.get("stream", line.get("error", "")).strip() for line in err.build_log][-8:]
            raise InputError(f"{name}: image build failed: {err.msg}; last lines: "
                             f"{' | '.join(t for t in tail if t)}") from None
        return tag
    finally:
        shutil.rmtree(context, ignore_errors=True)
