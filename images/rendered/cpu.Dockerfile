# Rendered by `reprokit images` from images/cpu.Dockerfile.j2 for target cpu; do not edit.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# Python 3.11 (matrix.yaml's python: the base image's own), a C/C++ toolchain and Python headers: inductor
# compiles C++ (CPU) and Triton launchers at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.11 python3.11-venv python3.11-dev gcc g++ \
    libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# torch alone from its own index (https://download.pytorch.org/whl/cpu), with its own dependencies (on GPUs the Triton
# build it was made with): no other index can supply another build of it. Then the rest from PyPI.
RUN python3.11 -m venv /opt/venv \
 && pip install --index-url https://download.pytorch.org/whl/cpu torch==2.14.1 \
 && pip install numpy==2.4.6 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 packaging==26.4 regex==2026.5.9


# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results under /work/out.
# (Ubuntu 24.04 bases already have a user 1000, `ubuntu`: it makes way.)
RUN if getent passwd 1000 >/dev/null; then userdel --remove "$(getent passwd 1000 | cut -d: -f1)"; fi \
 && useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and what of the vendor runtime imports without the device print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"

# Last, so that a new tag (any content change) leaves the layers above cached.
LABEL org.opencontainers.image.title="reprokit-cpu" \
      org.opencontainers.image.description="x86-64 CPU, inductor C++ backend" \
      org.opencontainers.image.version="reprokit/cpu:e3fe720ea6ae" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="cpu" \
      io.reprokit.torch="2.14.1" \
      io.reprokit.python="3.11"
