"""FP8 training the way users take it: torchao.float8.convert_to_float8_training, every recipe and compile mode.

Run: REPRO_DEVICE=cuda python repro.py   (needs torchao and compute capability >= 8.9)

A bfloat16 MLP is trained for a few AdamW steps on a fixed regression task, once in plain bfloat16 eager (the
reference) and once per configuration: recipe (tensorwise, rowwise) x mode (eager, torch.compile default,
fullgraph=True; mode="max-autotune-no-cudagraphs" is the cases fp8-torchao-float8-max-autotune-tensorwise and -rowwise). A configuration fails when it raises, gives a non-finite loss,
or its loss at any step is off the bfloat16 loss by more than REL_TOL. Each configuration prints one
`FP8_CONFIG {json}` line; the script fails (AssertionError) when any configuration fails.
"""
import copy
import json
import os
import sys

import torch

try:
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
except ImportError as err:
    print(f"torchao.float8 is not importable here ({err})")
    sys.exit(77)

device = os.environ.get("REPRO_DEVICE", "cuda")
if not device.startswith("cuda") or not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
    print("FP8 matmuls need a CUDA device of compute capability >= 8.9")
    sys.exit(77)

STEPS, REL_TOL = 5, 0.05
RECIPES = ["tensorwise", "rowwise"]
# max-autotune-no-cudagraphs is the cases fp8-torchao-float8-max-autotune-tensorwise and -rowwise: its autotuning alone takes minutes.
MODES = {"eager": None, "default": {}, "fullgraph": {"fullgraph": True}}


def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 2048), torch.nn.GELU(),
        torch.nn.Linear(2048, 512)).to(device=device, dtype=torch.bfloat16)


torch.manual_seed(1)
x = torch.randn(512, 512, device=device, dtype=torch.bfloat16)
target = torch.tanh(x @ (torch.randn(512, 512, device=device, dtype=torch.bfloat16) / 512 ** 0.5))


def train(model, compile_kw):
    step_model = model if compile_kw is None else torch.compile(model, **compile_kw)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(step_model(x).float(), target.float())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


reference = train(build(), None)
print("bfloat16 eager losses: " + ", ".join(f"{v:.5f}" for v in reference))
failed = []
for mode, kw in MODES.items():  # mode-major: a run cut short still has both recipes of every mode it reached
    for recipe in RECIPES:
        torch._dynamo.reset()
        row = {"path": "torchao.float8", "recipe": recipe, "mode": mode}
        try:
            model = convert_to_float8_training(copy.deepcopy(build()),
                                               config=Float8LinearConfig.from_recipe_name(recipe))
            losses = train(model, kw)
            worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
            row.update(losses=[round(v, 5) for v in losses], worst_rel_diff=round(worst, 4),
                       ok=all(v == v and abs(v) != float("inf") for v in losses) and worst <= REL_TOL)
        except Exception as err:  # noqa: BLE001 - one configuration's failure is recorded, the others still run
            row.update(ok=False, error=f"{type(err).__module__}.{type(err).__qualname__}: "
                                       f"{str(err).strip().splitlines()[0][:200] if str(err).strip() else ''}")
        print("FP8_CONFIG " + json.dumps(row), flush=True)
        if not row["ok"]:
            failed.append(f"{recipe}/{mode}")
total = len(RECIPES) * len(MODES)
print(f"FP8 configurations failing: {len(failed)}/{total}")
assert not failed, f"FP8 training configurations failing ({len(failed)}/{total}): {failed}"
