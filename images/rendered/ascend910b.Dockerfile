# Rendered by `reprokit images` from images/ascend.Dockerfile.j2 for target ascend910b; do not edit.
ARG BASE_IMAGE=ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.11
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="reprokit-ascend910b" \
      org.opencontainers.image.description="Huawei Ascend 910B (CANN + torch_npu)" \
      org.opencontainers.image.version="reprokit/ascend910b:fbf359be3fcb" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="ascend910b" \
      io.reprokit.torch="2.5.1"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# The CANN base image ships Python and the toolkit; only a compiler for inductor's C++ backend is added.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc g++ python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv \
 && pip install torch==2.5.1 torch-npu==2.5.1.post1 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 matplotlib==3.11.2 numpy==2.4.6

# Ascend: /dev/davinci*, davinci_manager, devmm_svm, hisi_hdc and the driver folders are mounted at run time.
ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest \
    LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/ascend-toolkit/latest/lib64

# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results at /results.
RUN useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and the vendor runtime import and print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__); import torch_npu; print('torch_npu', torch_npu.__version__)"
