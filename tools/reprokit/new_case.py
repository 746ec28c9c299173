"""Scaffold a case folder, or turn a standalone repro script (as posted in an issue) into a case."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from .schema import CATEGORIES, CaseId, InputError, conforms, load_case

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

YAML_HEADER = """# A repro case. Fields (validated by tools/reprokit/schema.py; `reprokit validate` checks them):
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
"""


def oracle_from_flags(raises: str | None, match: str | None, stdout: str | None, stderr: str | None,
                      hang: bool) -> dict:
    chosen = [flag for flag, on in (("--raises", raises), ("--stdout", stdout), ("--stderr", stderr),
                                    ("--hang", hang)) if on]
    if len(chosen) > 1:
        raise InputError(f"{' and '.join(chosen)}: give one oracle (what 'the bug reproduces' means)")
    if raises:
        return {"kind": "raises", "exception": raises, **({"match": match} if match else {})}
    if match:
        raise InputError("--match needs --raises (use --stdout/--stderr REGEX for output)")
    if stdout:
        return {"kind": "stdout", "match": stdout}
    if stderr:
        return {"kind": "stderr", "match": stderr}
    if hang:
        return {"kind": "hangs"}
    return {"kind": "nonzero-exit"}


def create(cases_dir: Path, case_id: str, *, source: Path | None, title: str | None, category: str,
           links: list[str], oracle: dict, timeout: int | None) -> Path:
    if not conforms(CaseId, case_id):
        raise InputError(f"ID {case_id!r}: lowercase letters, digits and '-' only, e.g. dynamic-shape-my-bug")
    folder = cases_dir / case_id
    if folder.exists():
        raise InputError(f"{folder}: already exists; pick another ID or edit that case")
    if source is not None and not source.is_file():
        raise InputError(f"--from {source}: no such file")
    title = title or (f"Repro from {source.name}" if source else f"TODO: describe {case_id}")
    data = {"id": case_id, "title": title, "category": category, "requires": {"devices": ["cpu", "cuda"]},
            "expect": {"repro": oracle}, "links": links}
    if timeout:
        data["requires"]["timeout"] = timeout
    folder.mkdir(parents=True)
    try:
        text = YAML_HEADER.format(categories=", ".join(CATEGORIES)) + yaml.safe_dump(data, sort_keys=False, width=120)
        (folder / "case.yaml").write_text(text, encoding="utf-8")
        if source is not None:
            shutil.copyfile(source, folder / "repro.py")  # unchanged, byte for byte
        else:
            (folder / "repro.py").write_text(REPRO_TEMPLATE.format(title=title), encoding="utf-8")
            (folder / "fixed.py").write_text(FIXED_TEMPLATE.format(id=case_id), encoding="utf-8")
        load_case(folder / "case.yaml")
    except InputError:
        shutil.rmtree(folder)
        raise
    return folder
