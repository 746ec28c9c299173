# Rendered by `reprokit images` from images/rocm.Dockerfile.j2 for target mi300x; do not edit.
ARG BASE_IMAGE=rocm/dev-ubuntu-24.04:6.4.1
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="reprokit-mi300x" \
      org.opencontainers.image.description="AMD Instinct MI300X (CDNA3, gfx942)" \
      org.opencontainers.image.version="reprokit/mi300x:a8f8531ae87c" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="mi300x" \
      io.reprokit.torch="2.13.0"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# A C/C++ toolchain and Python headers: inductor compiles C++ (CPU) and Triton launchers at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc g++ libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv \
 && pip install --extra-index-url https://download.pytorch.org/whl/rocm6.4 torch==2.13.0 triton==3.7.0 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 matplotlib==3.11.2 numpy==2.4.6

# ROCm: /dev/kfd and /dev/dri are passed in at run time; the runtime libraries come with the base image.
ENV HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 NCCL_NVLS_ENABLE=0

# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results at /results.
RUN useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and the vendor runtime import and print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__); print('hip', torch.version.hip)"
