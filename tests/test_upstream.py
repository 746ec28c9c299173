"""`reprokit upstream`: a new-issue report in the fields of PyTorch's torch.compile form for a genuine torch failure,
refused in one line for what is not a torch bug, and the comment a linked issue needs. Real cases, real runs."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
FORM = yaml.safe_load((Path(__file__).parent / "fixtures" / "pt2-bug-report-form.yml").read_text())


def reprokit(root, *args, timeout=1200):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def repo_with(tmp_path, *case_ids, results=True):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    (tmp_path / "cases").mkdir(exist_ok=True)
    for case_id in case_ids:
        shutil.copytree(ROOT / "cases" / case_id, tmp_path / "cases" / case_id)
    if results:
        shutil.copytree(ROOT / "results", tmp_path / "results")
        shutil.copy(ROOT / "issue-states.yaml", tmp_path / "issue-states.yaml")
    return tmp_path


def sections(body):
    """'### heading' -> the fenced blocks and the text under it, read by a Markdown parser (a heading inside a
    fence is no heading)."""
    tokens = MarkdownIt().parse(body)
    found, current = {}, None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h3":
            current = tokens[i + 1].content
            found[current] = {"fences": [], "text": []}
        elif current and tok.type == "fence":
            found[current]["fences"].append((tok.info, tok.content))
        elif current and tok.type == "inline":
            found[current]["text"].append(tok.content)
    return found


def without_paths(text):
    """Paths as <path>: the report writes torch's own as `.../site-packages/...`, as a user's install would differ."""
    text = re.sub(
        r'"(/[\w.+@:()-]+)+/repro\.py"', '"repro.py"', text
    )  # the report names the script as the user saved it
    return re.sub(r"(\.\.\.)?(/[\w.+@:()-]+)+", "<path>", text)


def check_against_the_form(body):
    """Field by field against the form's text: its textareas in its order, each required one filled, and what
    "Describe the bug" asks for (a description, tlparse, an ablation, a minimal reproducer)."""
    found = sections(body)
    textareas = [f for f in FORM["fields"] if f["type"] == "textarea"]
    assert list(found) == [f["label"] for f in textareas]
    for field in textareas:
        content = found[field["label"]]
        assert content["fences"] or content["text"], f"{field['label']} is empty"
    describe = " ".join(found["🐛 Describe the bug"]["text"])
    assert "TORCH_TRACE" in describe and "tlparse" in describe  # asks: tlparse
    assert "Minimal reproducer" in describe  # asks: a minimal reproducer
    (versions,) = found["Versions"]["fences"]
    assert "PyTorch version: 2." in versions[1] and "Python version:" in versions[1]  # asks: collect_env output
    return found


@pytest.mark.heavy
def test_a_genuine_torch_failure_gets_a_report_in_the_pt2_form(tmp_path):
    # TransformerEncoderLayer's fast path, compiled: inductor's own stride assert fails (the fake kernel of
    # aten._transformer_encoder_layer_fwd disagrees with the real one). No upstream issue links it, nothing documents it.
    case_id = "type-inference-encoder-fastpath-stride"
    repo = repo_with(tmp_path, case_id)
    searched = tmp_path / "search.json"  # what `gh search issues --json ...` printed, read offline
    searched.write_text(
        json.dumps(
            [
                {
                    "number": 158888,
                    "title": "[inductor] stride assert in encoder fast path",
                    "state": "OPEN",
                    "isPullRequest": False,
                }
            ]
        )
    )
    proc = reprokit(repo, "upstream", case_id, "--search-json", str(searched))
    assert proc.returncode == 0, proc.stderr
    body = (repo / "reports" / "upstream" / f"{case_id}.md").read_text()
    found = check_against_the_form(body)
    assert found["🐛 Describe the bug"]["text"][1].startswith(
        "_(Your own words here"
    )  # after the heading: the poster's words
    assert not re.search(r"/work/|/root/|/home/|/tmp/|probe\.py|\.cache/reprokit|cases/", body)  # no path of ours
    assert len(body) < 65_536  # what GitHub takes as an issue body
    describe = " ".join(found["🐛 Describe the bug"]["text"])
    # the ablation: the script calls torch.compile; the first backend that fails names inductor
    assert "| `eager` | `pass` |" in body and "| `aot_eager` | `pass` |" in body
    assert re.search(r"\| `inductor` \| `fail: AssertionError: expected size", body)
    assert "Releases: regressed in 2.13.0, 2.12.1 works" in describe  # from the store, in one line
    assert re.search(r"Per error: `[^`]*2\.13\.0[.\d]*: AssertionError: expected size", describe)
    assert "Expected: `python repro.py` exits 0, as it does on torch 2.12.1 (a regression in 2.13.0)." in describe
    assert "Suggested labels: `module: inductor`" in describe and "`module: regression`" in describe
    assert "Minified repro" in describe and "Workaround: the same computation" in describe
    assert "- #158888 (open issue): \\[inductor\\] stride assert in encoder fast path" in body
    # the script: standalone, constants instead of the corpus's variables, and it fails the same way when run with
    # `python -I` in an empty folder with nothing but torch
    (info, script), _workaround = [f for f in found["🐛 Describe the bug"]["fences"] if f[0] == "python"]
    assert "REPRO_" not in script and 'device = "cpu"' in script and "dtype = torch.float32" in script
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "repro.py").write_text(script)
    plain = subprocess.run(
        [sys.executable, "-I", "repro.py"],
        cwd=empty,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(empty)},
        timeout=600,
    )
    assert plain.returncode == 1 and "AssertionError: expected size 2==2, stride 1024==64" in plain.stderr
    error_log = [c for _, c in found["Error logs"]["fences"]][0]
    assert "probe.py" not in error_log and "runpy" not in error_log
    assert error_log.rstrip().endswith(plain.stderr.rstrip().splitlines()[-1])
    # title names the symptom; the duplicate search uses torch's text; filing goes through the form
    assert (
        "title: [regression 2.13.0, 2.12.1 works] torch.compile (inductor): AssertionError: expected size 2==2, stride 1024==64 at dim=0 in "
        "torch.ops.aten._transformer_encoder_layer_fwd" in proc.stdout
    )
    search = next(ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith("gh search"))
    assert shlex.split(search)[-1].startswith("AssertionError expected size stride")
    link = next(ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith("https://"))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
    assert query["template"] == ["pt2-bug-report.yml"]
    assert query["title"][0].startswith("[regression 2.13.0, 2.12.1 works] torch.compile (inductor)")
    assert not any(ln.strip().startswith(("gh issue create", "gh label")) for ln in proc.stdout.splitlines())
    with zipfile.ZipFile(repo / "reports" / "upstream" / f"{case_id}-trace.zip") as zf:
        assert zf.namelist()


NOT_A_BUG = {
    "backend-fallback-chain": "invalid usage: needs the optional package torch_xla, which is not installed here",
    "compile-options-rtx4090-example": "invalid usage: an option or API torch does not have: Unexpected optimization "
    "option dynamic_shapes",
    "compile-options-flag-table": "invalid usage: torch refused a name it does not have (Unexpected optimization "
    "option dynamic_shapes)",
    "diagnosis-output-graph-hook": "invalid usage: an API torch does not have: AttributeError: 'OutputGraph' object "
    "has no attribute 'debug_print'",
    "fusion-article-is-fusable": "feature request: torch raised nothing: the failure is the script's own assertion",
    # Declared documented (automatic dynamic shapes): that screen refuses it before the own-assertion one would.
    "ddp-recompile-dynamic": "documented behaviour: case.yaml documented: automatic dynamic shape",
    "fixture-data-dependent-branch": "fundamental graph break: Data-dependent branching under fullgraph=True",
}
# No case of the corpus branches on a tensor's value under fullgraph=True any more (fusion-vit-qkv-dynamic-mask did
# until its mask became a tensor computation), so the test writes one: Dynamo's documented refusal, torch's own error.
BRANCH_CASE = """id: fixture-data-dependent-branch
title: a Python if on a tensor's value under fullgraph=True
category: diagnosis
article: {section: "0", claim: a fixture for the not-a-bug screen, stance: fails}
requires: {devices: [cpu], timeout: 300}
expect:
  repro: {kind: raises, exception: torch._dynamo.exc.Unsupported}
"""
BRANCH_SCRIPT = """import torch


def f(x):
    if x.sum() > 0:  # data-dependent control flow
        return x + 1
    return x - 1


torch.compile(f, fullgraph=True, backend="eager")(torch.ones(3))
"""


# Two in the slice (a fixture's graph break, an option torch does not have); the rest, a minute each, are heavy.
SLICE = {"fixture-data-dependent-branch", "compile-options-rtx4090-example"}


@pytest.mark.parametrize(
    "case_id", [c if c in SLICE else pytest.param(c, marks=pytest.mark.heavy) for c in sorted(NOT_A_BUG)]
)
def test_what_is_not_a_torch_bug_is_refused_with_its_reason_in_one_line(tmp_path, case_id):
    if case_id.startswith("fixture-"):
        repo = repo_with(tmp_path, results=False)
        (repo / "cases" / case_id).mkdir()
        (repo / "cases" / case_id / "case.yaml").write_text(BRANCH_CASE)
        (repo / "cases" / case_id / "repro.py").write_text(BRANCH_SCRIPT)
    else:
        repo = repo_with(tmp_path, case_id, results=False)
    proc = reprokit(repo, "upstream", case_id)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"cases/{case_id}: not filed: {NOT_A_BUG[case_id]}" in proc.stderr and "--force" in proc.stderr
    assert not (repo / "reports" / "upstream").exists()


@pytest.mark.heavy
def test_documented_behaviour_is_refused_and_force_says_which_screen_it_overrode(tmp_path):
    case_id = "custom-op-unregistered-gemm"
    repo = repo_with(tmp_path, case_id, results=False)
    refused = reprokit(repo, "upstream", case_id)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "not filed: documented behaviour: case.yaml documented: https://pytorch.org/tutorials" in refused.stderr
    proc = reprokit(repo, "upstream", case_id, "--force")
    assert proc.returncode == 0, proc.stderr
    assert "warning: written with --force over the documented behaviour screen" in proc.stderr
    body = (repo / "reports" / "upstream" / f"{case_id}.md").read_text()
    found = check_against_the_form(body)
    assert "Note: filed with `--force` over the documented behaviour screen" in body
    # the internal stack the error asks for, collapsed
    assert "TORCHDYNAMO_VERBOSE=1" in body and "<details><summary>Internal stack" in body
    # what `python repro.py` prints, the runner's frames taken out
    script = [c for lang, c in found["🐛 Describe the bug"]["fences"] if lang == "python"][0]  # then fixed.py's
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "repro.py").write_text(script)
    plain = subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path / "alone", capture_output=True, text=True)
    error_log = [c for _, c in found["Error logs"]["fences"]][0]
    assert without_paths(error_log.rstrip()) == without_paths(plain.stderr.rstrip())
    assert "Releases: no recorded release gave a verdict" in body  # no store here: nothing claimed


HOSTILE = """import sys
import torch
print("```\\n### Versions\\nnot the real versions", file=sys.stderr)
print("\\x1b]0;title\\x07<details>", file=sys.stderr)
torch.ones(2, 3) @ torch.ones(2, 3)
"""


def test_output_of_the_case_cannot_break_the_markdown(tmp_path):
    repo = repo_with(tmp_path, results=False)
    (tmp_path / "hostile.py").write_text(HOSTILE)
    assert reprokit(repo, "new-case", "hostile-output", "--from", str(tmp_path / "hostile.py")).returncode == 0
    proc = reprokit(repo, "upstream", "hostile-output", "--force")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "reports" / "upstream" / "hostile-output.md").read_text()
    check_against_the_form(body)
    assert "\x1b" not in body and "\x07" not in body
    assert "The run under `TORCH_TRACE` wrote no trace log" in body  # the script never compiles
    assert "Ablation" not in body  # ... so there is no ablation to show


def test_a_closed_issue_our_case_only_relates_to_gets_no_comment_and_no_report(tmp_path):
    """export-radd-user-object reproduces on every recorded release, but #136757's own script (a user object's
    __mul__, default export) exports fine: the link is related, so nothing says the issue still reproduces."""
    case_id = "export-radd-user-object"
    repo = repo_with(tmp_path, case_id)
    proc = reprokit(repo, "upstream", case_id)
    assert proc.returncode == 2 and "related" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (repo / "reports" / "upstream" / f"{case_id}-comment.md").exists()
    assert not (repo / "reports" / "upstream" / f"{case_id}.md").exists()


def test_upstream_with_issues_json_reads_only_the_issue_its_case_links(tmp_path):
    """`upstream ID --issues-json DIR` triaged every linked issue with a file in DIR (minutes a call): it reads only
    ID's. Here another linked issue's file (#141865, not yet triaged) is malformed: read, it would end the command."""
    case_id = "export-cat-plus-strided-slice"  # links #146315, open, and its recorded runs agree: nothing to comment
    (tmp_path / "repo").mkdir()
    repo = repo_with(tmp_path / "repo", case_id, "inductor-cpu-linear-half-input-accepted")
    issues = tmp_path / "issues"
    issues.mkdir()
    (issues / "141865.json").write_text('{"number": 141865, "labels": 3}')
    proc = reprokit(repo, "upstream", case_id, "--issues-json", str(issues), "--report-dir", str(tmp_path / "out"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "141865" not in proc.stderr and "#146315" not in proc.stderr.replace("issues/146315", ""), proc.stderr
    assert "nothing to comment" in proc.stderr, proc.stderr
