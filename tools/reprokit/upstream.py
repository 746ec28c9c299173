"""Write a ready-to-file PyTorch bug report for one case from its last recorded result (no network calls).

Follows pytorch/pytorch's pt2 issue form: "Describe the bug" (self-contained repro inlined, backend ablation, trace),
"Error logs", "Versions". Re-runs the repro locally on the eager / aot_eager backends (when the record has no ladder)
and once under TORCH_TRACE, and runs tlparse on that trace when it is installed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from .corpus import DEVICE_STRING, CaseDir
from .execute import observe
from .outcome import LADDER, ladder_stage
from .records import Record
from .views import View

LABELS = {"ddp": ["oncall: distributed", "module: ddp"], "fsdp": ["oncall: distributed", "module: fsdp"],
          "dtensor": ["oncall: distributed", "module: dtensor"], "dynamic-shape": ["module: dynamic shapes"],
          "custom-op": ["module: custom-operators"], "amp": ["module: amp (automated mixed precision)"],
          "fusion": ["module: inductor"], "backend-fallback": ["module: inductor"],
          "compile-options": ["module: inductor"], "refactor": ["oncall: export"],
          "type-inference": ["module: dynamic shapes"], "memory-lifecycle": ["oncall: distributed"],
          "graph-partition": ["oncall: distributed"], "diagnosis": ["module: dynamo"]}


def labels_for(category: str) -> list[str]:
    return ["oncall: pt2", *LABELS.get(category, [])]


def versions_text(environment: dict) -> str:
    info = environment.get("collect_env") or {}
    lines = [f"{key}: {value}" for key, value in info.items() if value not in (None, "", [])]
    return "\n".join(lines) or "(no collect_env output was recorded)"


def ablation(cd: CaseDir, record: Record, device_kind: str, timeout: float) -> dict[str, str]:
    if record.ladder:
        return record.ladder
    env = {"REPRO_DEVICE": DEVICE_STRING[device_kind], "REPRO_DTYPE": record.dtype}
    ladder = {b: observe(cd.script("repro"), env=dict(os.environ), extra_env={**env, "REPROKIT_BACKEND": b},
                         timeout=timeout, launcher=cd.case.requires.launcher,
                         world_size=cd.case.requires.world_size).status for b in LADDER}
    ladder["default"] = record.status or "?"
    return ladder


def trace(cd: CaseDir, record: Record, device_kind: str, out_dir: Path, timeout: float) -> list[str]:
    """Run the repro under TORCH_TRACE into out_dir/trace, then tlparse (if installed) into out_dir/tlparse."""
    trace_dir = out_dir / "trace"
    shutil.rmtree(trace_dir, ignore_errors=True)
    trace_dir.mkdir(parents=True)
    env = {"REPRO_DEVICE": DEVICE_STRING[device_kind], "REPRO_DTYPE": record.dtype, "TORCH_TRACE": str(trace_dir)}
    observe(cd.script("repro"), env=dict(os.environ), extra_env=env, timeout=timeout,
            launcher=cd.case.requires.launcher, world_size=cd.case.requires.world_size, writable=(trace_dir,))
    notes = [f"`{p.relative_to(out_dir.parent)}`" for p in sorted(trace_dir.iterdir())]
    if shutil.which("tlparse") and notes:
        logs = sorted(trace_dir.iterdir())
        subprocess.run(["tlparse", str(logs[0]), "-o", str(out_dir / "tlparse"), "--overwrite"],
                       capture_output=True, timeout=300, check=False)
        if (out_dir / "tlparse").exists():
            notes.append(f"`{(out_dir / 'tlparse').relative_to(out_dir.parent)}/` (tlparse output)")
    return notes


def render(cd: CaseDir, record: Record, results: View, ladder: dict[str, str], trace_files: list[str],
           report_path: Path) -> str:
    case = cd.case
    title = f"[torch.compile] {case.title}"
    labels = labels_for(case.category)
    gh = ["gh", "issue", "create", "--repo", "pytorch/pytorch", "--title", title,
          *[x for label in labels for x in ("--label", label)], "--body-file", str(report_path)]
    repro = cd.script("repro").read_text(encoding="utf-8").rstrip()
    env = results.environment
    launch = (f"torchrun --standalone --nproc-per-node={case.requires.world_size} repro.py"
              if case.requires.launcher == "torchrun" else "python repro.py")
    device = DEVICE_STRING.get(env.get("device_kind", "cpu"), "cpu")
    ladder_line = ", ".join(f"`{k}`: {v}" for k, v in ladder.items())
    stage = ladder_stage(ladder) if {"eager", "aot_eager"} <= set(ladder) else record.stage
    lines = [f"<!-- Title: {title}", f"     Labels: {', '.join(labels)}", f"     File with: {shlex.join(gh)} -->", "",
             "### 🐛 Describe the bug", "",
             case.title + ".", ""]
    if case.article:
        lines += [f"(Claimed in a widely shared article, section {case.article.section}: {case.article.claim}.)", ""]
    lines += [f"Observed on {record.key.split('/')[1].split('@')[0]} with dtype `{record.dtype}`: "
              f"**{record.verdict}** ({record.why}); the failing stage is `{stage}`.", "",
              "Self-contained repro (only torch needed):", "", "```python", repro, "```", "",
              f"Run: `REPRO_DEVICE={device} REPRO_DTYPE={record.dtype} {launch}`", "",
              f"Backend ablation (the same script with every `torch.compile` backend replaced): {ladder_line}.", ""]
    if trace_files:
        lines += ["TORCH_TRACE output is attached: " + ", ".join(trace_files) + ".", ""]
    lines += ["### Error logs", "", "```", (record.stderr_tail or record.stdout_tail or "(no output)").strip(), "```",
              "", "### Versions", "", "```", versions_text(env), "```", ""]
    return "\n".join(lines)


def write(cd: CaseDir, results: View, out: Path, variant: str = "repro", timeout: float = 600) -> Path:
    records = [r for r in results.records if r.case == cd.case.id and r.variant == variant]
    failing = [r for r in records if r.verdict in ("reproduces", "fails-differently", "timeout")]
    record = (failing or records)[0]
    device_kind = results.environment.get("device_kind", "cpu")
    out.mkdir(parents=True, exist_ok=True)
    report_path = out / f"{cd.case.id}.md"
    ladder = ablation(cd, record, device_kind, timeout)
    trace_files = trace(cd, record, device_kind, out / cd.case.id, timeout)
    report_path.write_text(render(cd, record, results, ladder, trace_files, report_path), encoding="utf-8")
    return report_path
