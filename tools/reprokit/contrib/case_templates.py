"""The files `reprokit new-case ID` writes when no script is given, and the header every case.yaml it writes starts
with."""

REPRO_TEMPLATE = '''"""{title}

Run: python repro.py   (REPRO_DEVICE=cuda REPRO_DTYPE=bfloat16 to change device / dtype)
Exit 0 when torch behaves correctly; raise (or exit non-zero) when the bug shows.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.nn.functional.gelu(x) * 2  # TODO: the pattern that fails


x = torch.randn(8, 8, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x))  # check against eager
print("compiled result matches eager")
'''

FIXED_TEMPLATE = '''"""The fix for {id}: the same computation written so that it works, checked against eager."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.nn.functional.gelu(x) * 2  # TODO: the fixed pattern


x = torch.randn(8, 8, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x))
print("fixed variant matches eager")
'''

YAML_HEADER = """# A repro case. Fields (validated by tools/reprokit/model/case.py; `reprokit validate` checks them):
#   id        the folder name: lowercase words joined by '-'
#   title     one line: what the repro does
#   category  one of: {categories}
#   article   optional: {{section, claim, stance: fails|works|measures}} when the case tests a claim of the article
#   requires  devices (cpu/cuda/rocm/npu), min_devices, min_compute_capability, dtypes, world_size,
#             launcher (python|torchrun), timeout (seconds)
#   expect    repro: what "the bug reproduces" means. kind: raises (exception: dotted or bare class name,
#             match: regex on the message) | wrong-result (an assertion failed) | hangs (runs past the timeout)
#             | nonzero-exit | stdout / stderr (match: regex on the output)
#   overrides per-target replacement of expect, e.g. {{h100: {{repro: {{kind: nonzero-exit}}}}}}
#   links     upstream issues (https URLs)
#   documented optional: where PyTorch documents this behaviour (URL or sentence); `reprokit upstream` refuses it
#   source    article | sweep | upstream (a public pytorch/pytorch issue: then reported_on, issue_state,
#             issue_checked and area say what the issue page says)
"""
