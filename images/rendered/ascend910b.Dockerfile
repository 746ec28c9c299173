# Rendered by `reprokit images` from images/ascend.Dockerfile.j2 for target ascend910b; do not edit.
ARG BASE_IMAGE=ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.11
FROM ${BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH

# The CANN base image ships Python 3.11 (on its PATH, with the toolkit's Python dependencies) and the toolkit;
# only a compiler for inductor's C++ backend is added.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# torch alone from its own index (https://download.pytorch.org/whl/cpu), with its own dependencies (on GPUs the Triton
# build it was made with): no other index can supply another build of it. Then the rest from PyPI.
RUN python3.11 -m venv --system-site-packages /opt/venv \
 && pip install --index-url https://download.pytorch.org/whl/cpu torch==2.5.1 \
 && pip install torch-npu==2.5.1.post1 pydantic==2.13.4 PyYAML==6.0.3 tabulate==0.10.0 rich==15.0.0 Jinja2==3.1.6 packaging==26.4 regex==2026.5.9

# Ascend: /dev/davinci*, davinci_manager, devmm_svm, hisi_hdc and the driver's folders are mounted at run time (the
# driver's libraries too: torch_npu cannot load before that, so nothing here imports it).

# Cases run as an unprivileged user; the repository is mounted read-only at /work/repo, results under /work/out.
# (Ubuntu 24.04 bases already have a user 1000, `ubuntu`: it makes way.)
RUN if getent passwd 1000 >/dev/null; then userdel --remove "$(getent passwd 1000 | cut -d: -f1)"; fi \
 && useradd --create-home --uid 1000 --shell /bin/bash repro
USER 1000:1000
WORKDIR /work

# Self-test: the interpreter, torch and what of the vendor runtime imports without the device print their versions.
RUN python -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
# At container start, as Ascend's own CANN images do: CANN's environment (set_env.sh of the toolkit, and of NNAL
# where installed), then the self-test that needs the driver (torch_npu imports and counts the NPUs), then the command.
ENTRYPOINT ["/bin/bash", "-c", "for f in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/nnal/atb/set_env.sh; do if [ -f \"$f\" ]; then source \"$f\"; fi; done && python -c \"import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__, 'NPUs visible', torch.npu.device_count())\" && exec \"$@\"", "--"]

# Last, so that a new tag (any content change) leaves the layers above cached.
LABEL org.opencontainers.image.title="reprokit-ascend910b" \
      org.opencontainers.image.description="Huawei Ascend 910B (CANN + torch_npu)" \
      org.opencontainers.image.version="reprokit/ascend910b:e6a97eb0d666" \
      org.opencontainers.image.licenses="BSD-3-Clause" \
      io.reprokit.target="ascend910b" \
      io.reprokit.torch="2.5.1" \
      io.reprokit.python="3.11"
