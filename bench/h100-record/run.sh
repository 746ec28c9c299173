#!/bin/bash
# The h100 target recorded on an H100 (the nvidia-h100-x1 machine), one device call at a time.
#   PARTS="corpus sweep"    the one-GPU cases (a case that needs 2 devices keeps its 2 x H200 record: it is not
#                           run), then the sweep (or a slice of it: "1/4"), one after the other, in one store
# Each part runs what has no record of this torch and device yet (--skip-recorded; records of earlier calls are
# read from .prev/, a folder of their stores), longest first, starts none after DEADLINE seconds from the call's
# start and is stopped at LIMIT (SIGTERM: finished records are kept). The store comes back in $OUT/records.tar
# (a device call returns files at most two folders deep, plainly named); `reprokit import` brings it home, signed.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=/tmp/site:$PWD/tools
export REPROKIT_RECORD_KEY="$(cat .record-key)"
store="$OUT/store"
mkdir -p "$store/results/h100"
cp -r results/h100/cases results/h100/sweep "$store/results/h100/"
# earlier calls' records: appended, so --skip-recorded sees them and longest-first reads their times
for prev in .prev/*/; do
  [ -d "$prev" ] || continue
  for f in "$prev"*/*.jsonl; do
    [ -f "$f" ] || continue
    rel="${f#"$prev"}"; cat "$f" >> "$store/results/h100/$rel"
  done
done
# what the store held before this call: only the lines written after it come back
(cd "$store/results/h100" && find . -type f -name '*.jsonl' -exec wc -l {} + | grep -v ' total$') > "$OUT/before.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
python3 -c "import torch, transformers, torchao; print(torch.__version__, transformers.__version__, torchao.__version__)"
left() { echo $(( $1 - ($(date +%s) - start) )); }
run() {  # run ARGS...: one runner invocation within what is left of LIMIT and DEADLINE
  local limit deadline
  limit=$(left "${LIMIT:-560}"); deadline=$(left "${DEADLINE:-420}")
  [ "$deadline" -gt 5 ] || { echo "no time left for: $*"; return; }
  timeout -s TERM "$limit" python3 -m reprokit --root . run --host --target h100 --skip-recorded --no-report \
    --out "$store" --deadline "$deadline" "$@" 2>&1 | tee -a "$OUT/run.log" | tail -25
  echo "exit: ${PIPESTATUS[0]}" | tee -a "$OUT/run.log"
}
cases=$(python3 - <<'PY'
import pathlib, yaml
for p in sorted(pathlib.Path("cases").glob("*/case.yaml")):
    r = (yaml.safe_load(p.read_text()) or {}).get("requires") or {}
    if max(r.get("min_devices") or 1, r.get("world_size") or 1) == 1:
        print("--case", p.parent.name)
PY
)
for part in ${PARTS:-corpus sweep}; do
  # shellcheck disable=SC2086
  case "$part" in
    corpus) run --suite cases --jobs "${JOBS:-16}" $cases ;;
    sweep) run --suite sweep --jobs "${SWEEP_JOBS:-15}" ;;
    */*) run --suite sweep --shard "$part" --jobs "${SWEEP_JOBS:-15}" ;;
  esac
done
new="$OUT/new"
(cd "$store/results/h100" && find . -type f) | while read -r rel; do
  had=$(awk -v f="$rel" '$2 == f {print $1}' "$OUT/before.txt"); mkdir -p "$new/$(dirname "$rel")"
  tail -n +"$(( ${had:-0} + 1 ))" "$store/results/h100/$rel" > "$new/$rel"; [ -s "$new/$rel" ] || rm "$new/$rel"
done
tar -C "$new" -cf "$OUT/records.tar" . && rm -rf "$store" "$new" "$OUT/before.txt"
ls -la "$OUT"
