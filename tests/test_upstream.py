"""`reprokit upstream`: a bug report whose error log is what `python repro.py` prints, with collect_env's text."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from reprokit.contrib import bug_text, upstream
from reprokit.model import corpus
from reprokit.store.store import Store
from reprokit.store.views import repro_history

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
CPU_ENV = {"REPRO_DEVICE": "cpu", "REPRO_DTYPE": "float32"}


def reprokit(root, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run([sys.executable, "-m", "reprokit", "--root", str(root), *args], env=env,
                          capture_output=True, text=True)


def repo_with(tmp_path, *case_ids, results=True):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    for case_id in case_ids:
        shutil.copytree(ROOT / "cases" / case_id, tmp_path / "cases" / case_id)
    if results:
        shutil.copytree(ROOT / "results" / "cpu", tmp_path / "results" / "cpu")
    return tmp_path


def sections(body):
    """'### heading' -> the text under it, read by a Markdown parser (so a heading inside a fence is no heading)."""
    tokens = MarkdownIt().parse(body)
    found, current = {}, None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h3":
            current = tokens[i + 1].content
            found[current] = []
        elif current and tok.type == "fence":
            found[current].append(tok.content)
    return found


def without_paths(text):
    return re.sub(r"(/[\w.+@-]+)+", "<path>", text)


def test_the_report_shows_what_python_repro_py_prints(tmp_path):
    repo = repo_with(tmp_path, "custom-op-unregistered-gemm")
    case = repo / "cases" / "custom-op-unregistered-gemm"
    proc = reprokit(repo, "upstream", "custom-op-unregistered-gemm", "--force")
    assert proc.returncode == 0, proc.stderr
    # What a maintainer sees: the plain interpreter in the case's folder.
    plain = subprocess.run([sys.executable, "repro.py"], cwd=case, capture_output=True, text=True,
                           env={**os.environ, **CPU_ENV})
    assert plain.returncode == 1

    body = (repo / "reports" / "upstream" / "custom-op-unregistered-gemm.md").read_text()
    found = sections(body)
    assert list(found) == ["🐛 Describe the bug", "Error logs", "Versions"]
    (error_log,) = found["Error logs"]
    assert without_paths(error_log.rstrip()) == without_paths(plain.stderr.rstrip())
    assert "probe.py" not in error_log and "runpy" not in error_log
    (versions,) = found["Versions"]
    assert "PyTorch version: 2." in versions and "Python version:" in versions
    assert (case / "repro.py").read_text() in found["🐛 Describe the bug"]
    assert "`REPRO_DEVICE=cpu REPRO_DTYPE=float32 python repro.py` exits with status 1" in body
    assert re.search(r"\| `eager` \| `fail: torch\._dynamo\.exc\.Unsupported: Operator does not support", body)
    assert "| `aot_eager` |" in body and "| `inductor` |" in body
    # from the results store: every recorded release's build and verdict, whichever builds the store holds
    _, history = repro_history(Store(repo / "results").load("cpu", "cases"), "cpu", "custom-op-unregistered-gemm",
                               ["float32"])
    assert len(history) >= 8 and ("reproduces" in {v for _, v in history})
    for build, verdict in history:
        assert f"| `{build}` | `{verdict}` |" in body
    trace = repo / "reports" / "upstream" / "custom-op-unregistered-gemm-trace.zip"
    assert trace.stat().st_size > 0 and f"`{trace.name}`" in body
    if shutil.which("tlparse"):
        assert (repo / "reports" / "upstream" / "custom-op-unregistered-gemm-tlparse" / "index.html").exists()

    # The documented behaviour is filed only with --force, and says so.
    assert "warning: cases/custom-op-unregistered-gemm/case.yaml: documented:" in proc.stderr
    search, create = (line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("gh "))
    assert shlex.split(search) == ["gh", "search", "issues", "--repo", "pytorch/pytorch",
                                   "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors"]
    argv = shlex.split(create)
    assert argv[:5] == ["gh", "issue", "create", "--repo", "pytorch/pytorch"]
    assert argv[argv.index("--body-file") + 1] == str(repo / "reports" / "upstream" / "custom-op-unregistered-gemm.md")
    assert argv[argv.index("--title") + 1].startswith("A custom op (torch.ops.mylib.custom_gemm)")
    assert "oncall: pt2" in argv and "module: custom-operators" in argv


def test_a_documented_case_is_refused_without_force(tmp_path):
    repo = repo_with(tmp_path, "custom-op-unregistered-gemm")
    proc = reprokit(repo, "upstream", "custom-op-unregistered-gemm")
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "documented:" in proc.stderr and "--force" in proc.stderr
    assert not (repo / "reports" / "upstream").exists()


def test_a_case_already_filed_upstream_is_refused_without_force(tmp_path):
    repo = repo_with(tmp_path, "backend-fallback-chain")
    yml = repo / "cases" / "backend-fallback-chain" / "case.yaml"
    yml.write_text(yml.read_text() + "links:\n  - https://github.com/pytorch/pytorch/issues/12345\n")
    proc = reprokit(repo, "upstream", "backend-fallback-chain")
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1
    assert "already filed as https://github.com/pytorch/pytorch/issues/12345" in proc.stderr


def test_the_minified_repro_is_inlined_and_a_missing_tlparse_is_said(tmp_path):
    repo = repo_with(tmp_path, "backend-fallback-chain", results=False)
    assert reprokit(repo, "minify", "backend-fallback-chain").returncode == 0
    cd = corpus.discover(repo / "cases")[0]
    filed = upstream.write(cd, "cpu", "cpu", "float32", [], tmp_path / "out", tlparse=None)
    body = filed.report.read_text()
    assert (cd.path / "minified_repro.py").read_text().strip() in body
    assert "Minified repro, written by PyTorch's minifier" in body
    assert "tlparse was not installed where this report was written" in body
    assert any("pip install 'reprokit[upstream]'" in note for note in filed.notes)
    assert [p.name for p in filed.attachments] == ["backend-fallback-chain-trace.zip"]
    # The wrapper line "backend='openxla' raised:" is followed by the error it wraps.
    assert re.search(r"BackendCompilerFailed: backend=openxla raised: \w+", shlex.split(filed.commands[0])[-1])


HOSTILE = '''import sys
print("```\\n### Versions\\nnot the real versions", file=sys.stderr)
raise RuntimeError("message with ```` and `ticks` <!-- -->")
'''


def test_output_of_the_case_cannot_break_the_markdown(tmp_path):
    repo = repo_with(tmp_path, results=False)
    (repo / "cases").mkdir()
    (tmp_path / "hostile.py").write_text(HOSTILE)
    assert reprokit(repo, "new-case", "hostile-output", "--from", str(tmp_path / "hostile.py")).returncode == 0
    proc = reprokit(repo, "upstream", "hostile-output")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "reports" / "upstream" / "hostile-output.md").read_text()
    found = sections(body)
    assert list(found) == ["🐛 Describe the bug", "Error logs", "Versions"]
    plain = subprocess.run([sys.executable, "repro.py"], cwd=repo / "cases" / "hostile-output",
                           capture_output=True, text=True, env={**os.environ, **CPU_ENV})
    assert without_paths(found["Error logs"][0].rstrip()) == without_paths(plain.stderr.rstrip())
    assert "PyTorch version:" in found["Versions"][0]
    assert "The run under `TORCH_TRACE` wrote no trace log." in body  # the script never compiles


@pytest.mark.parametrize("text", ["plain", "a ``` fence", "````` five", "`edge`"])
def test_fences_and_code_spans_hold_any_backticks(text):
    parsed = MarkdownIt().parse(bug_text.fence(text + "\n### not a heading"))
    assert [t.type for t in parsed] == ["fence"] and parsed[0].content == text + "\n### not a heading\n"
    inline = MarkdownIt().parseInline(bug_text.code_span(text))[0].children
    assert [t.type for t in inline] == ["code_inline"] and inline[0].content == text


def test_the_key_line_of_a_torchrun_failure_is_the_ranks_error_not_the_launchers():
    stderr = ("[rank0]: Traceback (most recent call last):\n[rank0]:   File \"repro.py\", line 59, in <module>\n"
              "[rank0]: torch._dynamo.exc.Unsupported: Unsupported method call\n[rank0]:   Explanation: ...\n"
              "Traceback (most recent call last):\n  File \"repro.py\", line 14, in <module>\n"
              "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n")
    assert bug_text.key_line(stderr) == "torch._dynamo.exc.Unsupported: Unsupported method call"
