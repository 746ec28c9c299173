# Rendered by `reprokit images` from images/cuda.Dockerfile.j2 for target h100; do not edit.
ARG BASE_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="reprokit-h100" \
      org.opencontainers.image.description="NVIDIA H100 SXM (Hopper, sm_90; an H200 is the same architecture)" \
      org.opencontainers.image.version="reprokit/h100:41910efccd47" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="h100" \
      io.reprokit.torch="2.13.0"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# A C/C++ toolchain and Python headers: inductor compiles C++ (CPU) and Triton launchers at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc g++ libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv \
 && pip install --extra-index-url https://download.pytorch.org/whl/cu128 torch==2.13.0 triton==3.7.0 torchao==0.18.0 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 matplotlib==3.11.2 numpy==2.4.6

# NVIDIA: the driver comes from the host through the container toolkit (`--gpus` / a GPU DeviceRequest).
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results at /results.
RUN useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and the vendor runtime import and print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__); print('cuda', torch.version.cuda, 'devices visible', torch.cuda.device_count())"
