"""Write a PyTorch bug report for one case that a maintainer can take as is (pytorch's pt2-bug-report.yml sections).

Everything in the report ran on this machine now: `python repro.py` exactly as a maintainer runs it (the plain
interpreter, the target's device and dtype in REPRO_DEVICE / REPRO_DTYPE, no harness in the process) for the error
log, the same run once more under TORCH_TRACE (then tlparse, when installed), the backend ablation (the probe's
REPROKIT_BACKEND), and `python -m torch.utils.collect_env`. Only the case's history across torch releases comes from
the caller; this module reads no results file.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from reprokit.child import PROBE
from reprokit.contrib.bug_text import code_span, fence, key_line
from reprokit.model.case import Case
from reprokit.model.corpus import DEVICE_STRING, CaseDir
from reprokit.model.schema import InputError
from reprokit.run.child_setup import ALLOWED_ENV, FIXED_ENV
from reprokit.run.execute import observe

LABELS = {"ddp": ["oncall: distributed", "module: ddp"], "fsdp": ["oncall: distributed", "module: fsdp"],
          "dtensor": ["oncall: distributed", "module: dtensor"], "dynamic-shape": ["module: dynamic shapes"],
          "custom-op": ["module: custom-operators"], "amp": ["module: amp (automated mixed precision)"],
          "fusion": ["module: inductor"], "backend-fallback": ["module: inductor"],
          "compile-options": ["module: inductor"], "refactor": ["oncall: export"],
          "type-inference": ["module: dynamic shapes"], "memory-lifecycle": ["oncall: distributed"],
          "graph-partition": ["oncall: distributed"], "diagnosis": ["module: dynamo"]}
ABLATION = ("eager", "aot_eager", "inductor")  # pt2's ladder: the first backend that fails names the faulty stage
PYTORCH_ISSUE = re.compile(r"^https://github\.com/pytorch/pytorch/issues/\d+")
LOG_LIMIT = 30_000  # characters of stderr in the body; GitHub refuses an issue body over 65,536
INSTALL_TLPARSE = "pip install 'reprokit[upstream]'  (or: pip install tlparse)"
# Run before `python repro.py` replaces it (exec): confine writes with Landlock as the runner does (probe.py's
# stdlib-only function), then become the plain interpreter, so no frame of it is left in the process.
_EXEC_CONFINED = ("import os, sys; sys.path.insert(0, sys.argv[1]); import probe; "
                  "abi = probe.confine_writes(sys.argv[2].split(os.pathsep)); "
                  "open(os.path.join(sys.argv[2].split(os.pathsep)[0], 'confined'), 'w').write(str(abi)); "
                  "os.execv(sys.executable, [sys.executable, *sys.argv[3:]])")


@dataclass(frozen=True)
class PlainRun:
    """What `python repro.py` did on this machine."""

    command: str  # the line a maintainer types in the case's folder
    exit_code: int | None  # None: killed at the case's timeout
    seconds: float
    stdout: str
    stderr: str
    confined: str  # the Landlock ABI that confined its writes, or "None"


@dataclass(frozen=True)
class Filed:
    """What `write` made: the report, what to attach to the issue, the commands to run, and notes for the user."""

    report: Path
    attachments: list[Path]
    commands: list[str]
    notes: list[str]


def labels_for(category: str) -> list[str]:
    return ["oncall: pt2", *LABELS.get(category, [])]


def refusal(case: Case) -> str | None:
    """Why this case should not be filed as a new PyTorch bug, or None."""
    if case.documented:
        return (f"cases/{case.id}/case.yaml: documented: PyTorch documents this behaviour, a bug report would be "
                f"closed as expected: {case.documented}")
    filed = [url for url in case.links if PYTORCH_ISSUE.match(url)]
    if filed:
        return f"cases/{case.id}/case.yaml: links: already filed as {filed[0]} (comment there instead)"
    return None


# ---------------------------------------------------------------- Markdown for untrusted text


# ---------------------------------------------------------------- runs on this machine

def _env(workdir: Path, device_kind: str, dtype: str, extra: dict[str, str]) -> dict[str, str]:
    """A maintainer's shell without secrets or torch switches of the caller's: a fresh HOME, cold compile caches."""
    env = {k: v for k, v in os.environ.items() if k in ALLOWED_ENV}
    env.update(FIXED_ENV)
    for name in ("home", "tmp"):
        (workdir / name).mkdir(exist_ok=True)
    env.update(HOME=str(workdir / "home"), TMPDIR=str(workdir / "tmp"), TEMP=str(workdir / "tmp"),
               TORCHINDUCTOR_CACHE_DIR=str(workdir / "inductor"), TRITON_CACHE_DIR=str(workdir / "triton"),
               REPRO_DEVICE=DEVICE_STRING[device_kind], REPRO_DTYPE=dtype, **extra)
    return env


def run_plain(cd: CaseDir, device_kind: str, dtype: str, workdir: Path, python: str = sys.executable,
              extra_env: dict[str, str] | None = None) -> PlainRun:
    """`REPRO_DEVICE=.. REPRO_DTYPE=.. python repro.py` in a fresh process group, killed at the case's timeout."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = _env(workdir, device_kind, dtype, extra_env or {})
    writable = [str(workdir), "/dev", *(["/proc"] if device_kind != "cpu" else [])]
    script = str(cd.script("repro"))
    command = [python, "-c", _EXEC_CONFINED, str(PROBE.parent), os.pathsep.join(writable), script]
    out, err = workdir / "stdout.txt", workdir / "stderr.txt"
    start = time.monotonic()
    with open(out, "wb") as out_fh, open(err, "wb") as err_fh:
        proc = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out_fh,
                                stderr=err_fh, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=cd.case.requires.timeout)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the script's leftovers (compile workers, ranks)
        except ProcessLookupError:
            pass
        proc.wait()
    shown = {k: env[k] for k in ("REPRO_DEVICE", "REPRO_DTYPE")}
    confined = (workdir / "confined").read_text() if (workdir / "confined").exists() else "None"
    return PlainRun(command=" ".join(f"{k}={v}" for k, v in shown.items()) + " python repro.py", exit_code=code,
                    seconds=round(time.monotonic() - start, 1), stdout=out.read_text(errors="replace"),
                    stderr=err.read_text(errors="replace"), confined=confined)


def ablation(cd: CaseDir, device_kind: str, dtype: str) -> dict[str, str]:
    """backend -> what the repro did with every torch.compile call's backend replaced (and mode/options dropped)."""
    found = {}
    for backend in ABLATION:
        obs = observe(cd.script("repro"), env=dict(os.environ), timeout=cd.case.requires.timeout,
                      extra_env={"REPRO_DEVICE": DEVICE_STRING[device_kind], "REPRO_DTYPE": dtype,
                                 "REPROKIT_BACKEND": backend},
                      launcher=cd.case.requires.launcher, world_size=cd.case.requires.world_size)
        headline = next((ln.strip() for ln in (obs.message or "").splitlines() if ln.strip()), "")
        found[backend] = obs.status + (f": {obs.exception}: {headline}"[:200] if obs.exception else "")
    return found


def collect_env(python: str = sys.executable) -> str:
    """The text PyTorch's bug templates ask for: `python -m torch.utils.collect_env`, with the same interpreter."""
    try:
        proc = subprocess.run([python, "-m", "torch.utils.collect_env"], capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return "(python -m torch.utils.collect_env did not finish in 300 s)"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"(python -m torch.utils.collect_env failed: {last})"
    return proc.stdout.strip()


def bundle_trace(trace_dir: Path, out: Path, case_id: str, tlparse: str | None) -> tuple[list[Path], str]:
    """Zip the TORCH_TRACE logs (and tlparse's output, when installed) next to the report; a sentence for it."""
    logs = sorted(p for p in trace_dir.glob("*") if p.is_file()) if trace_dir.is_dir() else []
    if not logs:
        return [], "The run under `TORCH_TRACE` wrote no trace log."
    zips = [Path(shutil.make_archive(str(out / f"{case_id}-trace"), "zip", trace_dir))]
    sentence = f"Attached: `{zips[0].name}`, the raw `TORCH_TRACE` logs of the same run ({len(logs)} file(s))"
    if tlparse is None:
        return zips, sentence + "; tlparse was not installed where this report was written."
    html = out / f"{case_id}-tlparse"
    # One log: that file (tlparse 0.4.3's --latest refuses the file it picks); ranks: one report over all of them.
    source = [str(logs[0])] if len(logs) == 1 else [str(trace_dir), "--all-ranks-html"]
    proc = subprocess.run([tlparse, *source, "-o", str(html), "--overwrite", "--no-browser"],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0 or not html.is_dir():
        said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
        return zips, sentence + f"; tlparse failed on it: {code_span(next(iter(said)))}."
    zips.append(Path(shutil.make_archive(str(html), "zip", html)))
    return zips, sentence + f", and `{zips[1].name}`, the whole tlparse output (open `index.html`)."


# ---------------------------------------------------------------- the report

def render(cd: CaseDir, target: str, device_kind: str, run: PlainRun, ladder: dict[str, str], versions: str,
           history: list[tuple[str, str]], trace_sentence: str, full_log: Path | None) -> str:
    case = cd.case
    key = key_line(run.stderr)
    ended = f"exits with status {run.exit_code}" if run.exit_code is not None else \
        f"was still running at {case.requires.timeout} s (killed)"
    torch_now = next((ln.split(":", 1)[1].strip() for ln in versions.splitlines()
                      if ln.startswith("PyTorch version:")), "?")
    lines = ["### 🐛 Describe the bug", "", case.title + ("" if case.title[-1] in ".?!" else "."), ""]
    if case.notes:
        lines += ["Notes from the repro corpus this case comes from: " + " ".join(case.notes.split()), ""]
    lines += [f"On {DEVICE_STRING[device_kind]} with torch {torch_now}, `{run.command}` {ended} after "
              f"{run.seconds} s" + (f": {code_span(key[:300])}" if key else "."), "",
              "```sh", run.command, "```", "", fence(cd.script("repro").read_text(encoding="utf-8"), "python"), ""]
    minified = cd.path / "minified_repro.py"
    if minified.exists():
        lines += ["Minified repro, written by PyTorch's minifier (`TORCHDYNAMO_REPRO_AFTER`) from the script above:",
                  "", fence(minified.read_text(encoding="utf-8"), "python"), ""]
    lines += ["Backend ablation (the same script with the backend of every `torch.compile` call replaced, its "
              "`mode` and `options` dropped):", "", "| backend | result |", "| --- | --- |",
              *[f"| `{b}` | {code_span(ladder[b])} |" for b in ABLATION], ""]
    lines += [trace_sentence, ""]
    if history:
        lines += [f"Torch releases tested on target `{target}` ({DEVICE_STRING[device_kind]}):", "",
                  "| torch | this repro |", "| --- | --- |", *[f"| {code_span(v)} | {code_span(w)} |"
                                                           for v, w in history], ""]
    if case.links:
        lines += ["Related: " + ", ".join(f"<{url}>" for url in case.links), ""]
    log = run.stderr.rstrip()
    lines += ["### Error logs", ""]
    if len(log) > LOG_LIMIT:
        log = log[-LOG_LIMIT:].split("\n", 1)[-1]
        lines += [f"The last {LOG_LIMIT // 1000}k characters of stderr; the whole log is attached as "
                  f"`{full_log.name if full_log else 'stderr.txt'}`.", ""]
    lines += [fence(log or "(nothing on stderr)"), ""]
    if run.stdout.strip():
        lines += ["stdout:", "", fence(run.stdout[-5000:]), ""]
    lines += ["### Versions", "", fence(versions), ""]
    return "\n".join(lines)


def write(cd: CaseDir, target: str, device_kind: str, dtype: str, history: list[tuple[str, str]], out: Path, *,
          force: bool = False, tlparse: str | None = None, python: str = sys.executable) -> Filed:
    """Run the case here as a maintainer would and write out/ID.md with its attachments.

    history: (torch version, repro verdict) of this case on `target` from recorded runs, oldest first.
    """
    reason = refusal(cd.case)
    if reason and not force:
        raise InputError(f"{reason}; --force writes the report anyway")
    notes = [f"warning: {reason}"] if reason else []
    out.mkdir(parents=True, exist_ok=True)
    case_id = cd.case.id
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-upstream-"))
    try:
        run = run_plain(cd, device_kind, dtype, workdir / "plain", python)
        if run.exit_code == 0 and not force:
            raise InputError(f"{case_id}: `{run.command}` exited 0 on this machine: the bug does not reproduce "
                             "here, nothing to file (--force writes the report anyway)")
        trace_dir = workdir / "traced" / "trace"
        trace_dir.mkdir(parents=True)
        run_plain(cd, device_kind, dtype, workdir / "traced", python, {"TORCH_TRACE": str(trace_dir)})
        attachments, trace_sentence = bundle_trace(trace_dir, out, case_id, tlparse)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if run.confined == "None":
        notes.append("note: the plain run's writes were not confined (no Landlock in this kernel)")
    full_log = None
    if len(run.stderr) > LOG_LIMIT:
        full_log = out / f"{case_id}-stderr.txt"
        full_log.write_text(run.stderr, encoding="utf-8")
        attachments.append(full_log)
    ladder = ablation(cd, device_kind, dtype)
    versions = collect_env(python)
    report = out / f"{case_id}.md"
    report.write_text(render(cd, target, device_kind, run, ladder, versions, history, trace_sentence, full_log),
                      encoding="utf-8")
    if (out / f"{case_id}-tlparse" / "index.html").exists():
        notes.append(f"tlparse's report: {out / f'{case_id}-tlparse' / 'index.html'}")
    if tlparse is None:
        notes.append(f"tlparse is not installed, the report attaches the raw trace only; install it: {INSTALL_TLPARSE}")
    key = key_line(run.stderr) or cd.case.title
    search = ["gh", "search", "issues", "--repo", "pytorch/pytorch", re.sub(r"['\"]", "", key)[:200]]
    create = ["gh", "issue", "create", "--repo", "pytorch/pytorch", "--title", cd.case.title,
              "--body-file", str(report), *[x for label in labels_for(cd.case.category) for x in ("--label", label)]]
    return Filed(report=report, attachments=attachments, commands=[shlex.join(search), shlex.join(create)],
                 notes=notes)
