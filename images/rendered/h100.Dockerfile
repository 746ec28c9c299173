# Rendered by `reprokit images` from images/cuda.Dockerfile.j2 for target h100; do not edit.
ARG BASE_IMAGE=nvidia/cuda:13.0.0-base-ubuntu24.04
FROM ${BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# Python 3.12 (matrix.yaml's python: the base image's own), a C/C++ toolchain and Python headers: inductor
# compiles C++ (CPU) and Triton launchers at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.12 python3.12-venv python3.12-dev gcc g++ \
    libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# torch alone from its own index (https://download.pytorch.org/whl/cu130), with its own dependencies (on GPUs the Triton
# build it was made with): no other index can supply another build of it. Then the rest from PyPI.
RUN python3.12 -m venv /opt/venv \
 && pip install --index-url https://download.pytorch.org/whl/cu130 torch==2.13.0 \
 && pip install torchao==0.18.0 numpy==2.4.6 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 packaging==26.4 regex==2026.5.9

# NVIDIA: the driver comes from the host through the container toolkit (`--gpus` / a GPU DeviceRequest).
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results under /work/out.
# (Ubuntu 24.04 bases already have a user 1000, `ubuntu`: it makes way.)
RUN if getent passwd 1000 >/dev/null; then userdel --remove "$(getent passwd 1000 | cut -d: -f1)"; fi \
 && useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and what of the vendor runtime imports without the device print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__); print('cuda', torch.version.cuda, 'devices visible', torch.cuda.device_count())"

# Last, so that a new tag (any content change) leaves the layers above cached.
LABEL org.opencontainers.image.title="reprokit-h100" \
      org.opencontainers.image.description="NVIDIA H100 SXM (Hopper, sm_90; an H200 is the same architecture)" \
      org.opencontainers.image.version="reprokit/h100:c0b4011a569b" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="h100" \
      io.reprokit.torch="2.13.0" \
      io.reprokit.python="3.12"
