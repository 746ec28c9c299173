#!/bin/bash
# The h100 sweep on the nvidia-h200 machine (the h100 target's named substitute), one device call at a time: each call
# runs the cells that have no current record of this torch and device (--skip-recorded), longest first, starts none
# after DEADLINE seconds and stops at LIMIT (SIGTERM: finished records are kept). The store is a copy of the
# repository's sweep records in $OUT/store; `reprokit import $OUT/store/results` brings the new ones home.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=/tmp/site:$PWD/tools
export REPROKIT_RECORD_KEY="$(cat .record-key)"
mkdir -p "$OUT/store/results/h100"
cp -r results/h100/sweep "$OUT/store/results/h100/"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
python3 -c "import torch, transformers, torchao; print(torch.__version__, transformers.__version__, torchao.__version__)"
timeout -s TERM "${LIMIT:-560}" python3 -m reprokit --root . run --host --target h100 --suite sweep --skip-recorded \
  --jobs "${JOBS:-15}" --deadline "${DEADLINE:-330}" --no-report --out "$OUT/store" 2>&1 | tee "$OUT/sweep.log" | tail -40
echo "exit: ${PIPESTATUS[0]}"
# what comes back from a device call is at most two folders deep and plainly named (no "+"): the store's files, in a tar
tar -C "$OUT/store/results/h100" -cf "$OUT/records.tar" sweep && rm -rf "$OUT/store"
ls -la "$OUT"
