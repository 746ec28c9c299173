"""`reprokit backlog` (tracker/backlog_*.py): shards disjoint and complete, the judged key, the journal (append, a torn
line, resume), the merge (newest judgement, its draft, what changed), the list (groups, hostile text escaped), bad
input as one line, an engine crash as one issue's line, the gh query's command line, and the workflow's shard command
run here on real issue files with this environment's torch (--here)."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.publish import backlog_page
from reprokit.store.backlog_journal import JOURNAL, Journal, Judgement, Ran, from_line, newest, read, to_line
from reprokit.tracker import backlog_fetch, triage_request
from reprokit.tracker.backlog_command import merge
from reprokit.tracker.backlog_select import ALL, Entry, Shard, judged_key, read_folder
from reprokit.tracker.backlog_shard import run_shard
from reprokit.tracker.issue import issue_json

ROOT = Path(__file__).resolve().parents[1]
TRIAGE, TWO = ROOT / "tests" / "fixtures" / "triage", ROOT / "tests" / "fixtures" / "triage-two"
TWO_TRUTH = {e["number"]: e for e in yaml.safe_load((TWO / "truth.yaml").read_text())}
NOT_A_BUG = (118959, 183761)  # closed by a maintainer's word: triage ends before any run (seconds)
SCRIPT = "```python\nimport torch\nprint(torch.ones(2))\n```\n"


def gh_issue(number, body="words only", state="OPEN", comments=(), title="a title"):
    return {
        "number": number,
        "title": title,
        "body": body,
        "state": state,
        "createdAt": "2026-01-02T00:00:00Z",
        "comments": [
            {"author": {"login": who}, "authorAssociation": assoc, "body": text, "createdAt": "2026-01-03T00:00:00Z"}
            for who, assoc, text in comments
        ],
    }


def reprokit(*args, env_extra=None, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(ROOT), "backlog", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=kw.pop("timeout", 600),
        **kw,
    )


def judgement(number, kind="still reproduces", state="OPEN", at="2026-01-01T00:00:00+00:00", **kw):
    return Judgement(
        ident=f"#{number}",
        number=number,
        state=state,
        title=kw.pop("title", f"issue {number}"),
        kind=kind,
        words=kw.pop("words", "on torch 2.14.1"),
        key=kw.pop("key", "k"),
        judged_at=at,
        **kw,
    )


# --- selecting and sharding -----------------------------------------------------------------------------------------


def test_shards_are_disjoint_and_cover_the_set_whatever_the_files_order(tmp_path):
    for n in (101, 102, 7, 55555, 3, 4, 9, 12):
        (tmp_path / f"{n}.json").write_text(json.dumps(gh_issue(n)))
    (tmp_path / "notes.json").write_text("{")  # no number: chosen by its name's checksum
    entries = read_folder(tmp_path)
    assert [e.ident for e in entries][:3] == ["#3", "#4", "#7"] and entries[-1].ident == "notes.json"
    for count in range(1, 8):
        parts = [[e.ident for e in entries if Shard(k, count).takes(e)] for k in range(1, count + 1)]
        assert sorted(i for p in parts for i in p) == sorted(e.ident for e in entries)  # complete, none twice
        again = [[e.ident for e in reversed(entries) if Shard(k, count).takes(e)] for k in range(1, count + 1)]
        assert [sorted(p) for p in parts] == [sorted(p) for p in again]  # stable: by number, not position


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1-3", "3", ""])
def test_a_malformed_shard_is_refused_in_one_line(text):
    with pytest.raises(InputError, match="K/N"):
        Shard.parse(text)
    assert Shard.parse(" 2/8 ") == Shard(2, 8)


def test_the_key_changes_with_the_body_a_script_a_maintainers_word_or_the_releases_and_nothing_else():
    base = gh_issue(5, body="fails:\n" + SCRIPT)
    key = judged_key(issue_json.parse(base), "cpu", ("2.13.0", "2.15.0"))
    same = [
        {**base, "title": "a new title"},
        {**base, "comments": gh_issue(5, comments=[("someone", "NONE", "+1, same here")])["comments"]},
    ]
    for data in same:
        assert judged_key(issue_json.parse(data), "cpu", ("2.13.0", "2.15.0")) == key
    changed = [
        {**base, "body": base["body"] + "\nedited"},
        {**base, "comments": gh_issue(5, comments=[("someone", "NONE", "shorter:\n" + SCRIPT)])["comments"]},
        {**base, "comments": gh_issue(5, comments=[("m", "MEMBER", "this is expected")])["comments"]},
        {**base, "state": "CLOSED", "stateReason": "COMPLETED"},
    ]
    for data in changed:
        assert judged_key(issue_json.parse(data), "cpu", ("2.13.0", "2.15.0")) != key
    assert judged_key(issue_json.parse(base), "cpu", ("2.13.0", "2.16.0")) != key  # a new release
    assert judged_key(issue_json.parse(base), "a100", ("2.13.0", "2.15.0")) != key


# --- the journal ----------------------------------------------------------------------------------------------------


def test_a_torn_last_line_is_ignored_and_cut_before_the_next_append(tmp_path):
    path = tmp_path / JOURNAL
    with Journal(path) as journal:
        journal.append(judgement(1))
    with open(path, "a") as f:
        f.write(to_line(judgement(2))[:40])  # killed mid-write
    assert [j.ident for j in read(path)] == ["#1"]
    with Journal(path) as journal:
        journal.append(judgement(3))
    assert [j.ident for j in read(path)] == ["#1", "#3"] and path.read_text().count("\n") == 2


def test_a_journal_line_that_is_not_a_judgement_is_skipped():
    good = json.loads(to_line(judgement(4, draft="issue-4-comment.md")))
    assert from_line(json.dumps(good)) == judgement(4, draft="issue-4-comment.md")
    for bad in (
        {**good, "draft": "../../../etc/passwd"},
        {**good, "draft": "issue-5-comment.md"},
        {**good, "number": True},
        {**good, "releases": [{"release": 1, "line": "x"}]},
        {k: v for k, v in good.items() if k != "key"},
        {**good, "extra": 1},
        [good],
    ):
        assert from_line(json.dumps(bad)) is None


def test_the_newest_judgement_of_an_issue_stands():
    old, new = (
        judgement(7, at="2026-01-01T00:00:00+00:00"),
        judgement(7, kind="fails differently", at="2026-02-01T00:00:00+00:00"),
    )
    assert newest([new, old])["#7"] is new and newest([old, new])["#7"] is new


def test_a_gpu_shards_judgement_is_never_replaced_by_a_cpu_shards_needs_a_cuda_gpu():
    """The CPU shards refuse a CUDA script ("not judged: the script needs a CUDA GPU"); the GPU shard judges it. The
    merge keeps the GPU shard's judgement whichever ran last; a later judgement of the GPU shard still wins."""
    gpu = judgement(9, kind="no longer reproduces", words="on torch 2.11.0", at="2026-01-01T00:00:00+00:00")
    cpu = judgement(
        9,
        kind="not judged",
        words="the script needs a CUDA GPU: run with --target h100 on a GPU machine",
        at="2026-01-02T00:00:00+00:00",
    )
    assert newest([gpu, cpu])["#9"] is gpu and newest([cpu, gpu])["#9"] is gpu
    again = judgement(9, kind="still reproduces", at="2026-01-03T00:00:00+00:00")
    assert newest([gpu, cpu, again])["#9"] is again
    later = judgement(9, kind="not judged", words=cpu.words, at="2026-01-04T00:00:00+00:00")
    assert newest([cpu, later])["#9"] is later  # between two refusals, the newest stands as before


def test_needs_gpu_takes_only_the_issues_whose_script_needs_a_cuda_gpu(tmp_path):
    """`backlog --needs-gpu` (the GPU shard's selection): a real CUDA issue of tests/fixtures/triage-cuda is taken,
    a CPU one and a file that cannot be read are not; on a CPU target the one taken is refused before anything runs."""
    folder = tmp_path / "issues"
    folder.mkdir()
    (folder / "163275.json").write_bytes((ROOT / "tests" / "fixtures" / "triage-cuda" / "163275.json").read_bytes())
    (folder / f"{NOT_A_BUG[0]}.json").write_bytes((TRIAGE / f"{NOT_A_BUG[0]}.json").read_bytes())
    (folder / "5.json").write_text(json.dumps(gh_issue(5, "```python\nimport torch\nx = torch.ones(2)\n```\n")))
    (folder / "6.json").write_text("{ not json")
    proc = reprokit("--issues-json", folder, "--needs-gpu", "--here", "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (kept,) = read(tmp_path / "out" / JOURNAL)
    assert kept.number == 163275 and kept.line().startswith("not judged: the script needs a CUDA GPU"), kept.line()


# --- merging and the list -------------------------------------------------------------------------------------------


def shard_folder(folder: Path, *judgements: Judgement, drafts=()):
    with Journal(folder / JOURNAL) as journal:
        for j in judgements:
            journal.append(j)
    (folder / "drafts").mkdir(exist_ok=True)
    for number in drafts:
        (folder / "drafts" / f"issue-{number}-comment.md").write_text(f"draft of {number} in {folder.name}")
    return folder


def test_merge_keeps_each_issue_once_its_newest_judgement_with_its_draft(tmp_path):
    a = shard_folder(
        tmp_path / "a",
        judgement(1, "no longer reproduces", at="2026-03-01T00:00:00+00:00", draft="issue-1-comment.md"),
        judgement(2, at="2026-03-01T00:00:00+00:00"),
        drafts=[1],
    )
    b = shard_folder(
        tmp_path / "b",
        judgement(1, "still reproduces", at="2026-02-01T00:00:00+00:00"),
        judgement(3, "fails differently", state="CLOSED", at="2026-03-02T00:00:00+00:00", draft="issue-3-comment.md"),
    )  # its draft file is missing: no link to it
    out = tmp_path / "merged"
    assert merge([a, b], out, None, say=lambda _: None) == 0
    merged = read(out / JOURNAL)
    assert [(j.ident, j.kind) for j in merged] == [
        ("#1", "no longer reproduces"),
        ("#2", "still reproduces"),
        ("#3", "fails differently"),
    ]
    assert (out / "drafts" / "issue-1-comment.md").read_text() == "draft of 1 in a"
    assert merged[2].draft is None and not (out / "drafts" / "issue-3-comment.md").exists()
    page = (out / "backlog.md").read_text()
    assert "The first backlog here" in page and "[drafts/issue-1-comment.md](drafts/issue-1-comment.md)" in page
    # the next merge says what changed since this one
    c = shard_folder(
        tmp_path / "c",
        judgement(1, "no longer reproduces", at="2026-03-01T00:00:00+00:00"),
        judgement(2, "no longer reproduces", at="2026-04-01T00:00:00+00:00"),
        judgement(4, at="2026-04-01T00:00:00+00:00"),
    )
    merge([c], out, None, say=lambda _: None)
    feed = (out / "backlog.md").read_text().split("## Changed since the last backlog", 1)[1].split("\n## ", 1)[0]
    assert "#2](https://github.com/pytorch/pytorch/issues/2): still reproduces → open, no longer" in feed
    assert "issues/3): no longer in the set (was: fails differently)" in feed and "issues/4): new, still" in feed
    assert "issues/1)" not in feed  # unchanged
    with pytest.raises(InputError, match="no backlog.jsonl"):
        merge([tmp_path / "nothing"], out, None)


@pytest.mark.parametrize(
    "state,kind,group",
    [
        ("OPEN", "no longer reproduces", backlog_page.QUESTION),
        ("OPEN", "does not reproduce", backlog_page.QUESTION),
        ("CLOSED", "still reproduces", backlog_page.AGAIN),
        ("CLOSED", "fails differently", backlog_page.DIFFERENT),
        ("OPEN", "fails differently", backlog_page.DIFFERENT),
        ("OPEN", "still reproduces", backlog_page.STILL),
        ("CLOSED", "no longer reproduces", backlog_page.AGREES),
        ("CLOSED", "not posted", backlog_page.NOT),
        ("", "not read", backlog_page.NOT),
        ("OPEN", "not judged", backlog_page.NOT),
    ],
)
def test_the_list_groups_each_issue_by_what_a_maintainer_does(state, kind, group):
    assert backlog_page.group(judgement(1, kind, state)) == group


def test_issue_text_makes_no_markup_of_the_list():
    hostile = (
        "x\n# Heading\n<img src=x onerror=alert(1)> [click](https://e.vil) ![i](https://e.vil/p.png) | a "
        "`code` **b** &#x202e; \u202egnp.exe \x1b[31m ::error::x"
    )
    page = backlog_page.render(
        [judgement(9, title=hostile, words=hostile, signature=hostile, releases=[Ran("2.14.1", hostile)])], None
    )
    body = page.split("## Still reproduces", 1)[1].replace("[#9](https://github.com/pytorch/pytorch/issues/9)", "")
    assert "<img" not in body and not re.search(r"(?<!\\)\]\(", body) and "\n# Heading" not in body
    assert "\u202e" not in body and "\\u202e" in body and "\x1b" not in body and "&amp;\\#x202e;" in body
    assert "\\[click\\]" in body and "\\`code\\`" in body and "\\*\\*b\\*\\*" in body and "\\|" in body
    assert all(line.startswith(("-  (open): ", "  - ")) for line in body.strip().splitlines()[2:])


# --- bad input, crashes, resume: real runs of the engine on issues it ends before running torch --------------------


def test_a_malformed_or_unreadable_file_is_one_line_and_the_batch_goes_on(tmp_path):
    folder = tmp_path / "issues"
    folder.mkdir()
    (folder / "118959.json").write_bytes((TRIAGE / "118959.json").read_bytes())
    (folder / "11.json").write_text("{not json")
    (folder / "12.json").write_text(json.dumps({**gh_issue(12), "state": "MERGED"}))
    (folder / "13.json").write_text(json.dumps(gh_issue(14)))  # another issue than its name says
    (folder / "list.json").write_text("[]")
    (folder / "15.json").mkdir()  # not a file at all
    proc = reprokit("--issues-json", folder, "--out", tmp_path / "out", "--here")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    page = (tmp_path / "out" / "backlog.md").read_text()
    for said in (
        "#11](https://github.com/pytorch/pytorch/issues/11) (state unknown): (no title)\n  - standing: "
        "not read: not JSON",
        "standing: not read: issue JSON: state 'MERGED': OPEN or CLOSED (12.json)",
        "not read: the file holds issue \\#14, not \\#13",
        "file list.json (state unknown)",
        "not read: issue JSON: not an object",
        "#15](https://github.com/pytorch/pytorch/issues/15)",
        "#118959](https://github.com/pytorch/pytorch/issues/118959) (closed)",
    ):
        assert said in page, said
    assert "## Not judged: why (6)" in page and "said: " in page.split("issues/118959", 1)[1]


def test_resume_skips_what_is_judged_and_judges_an_edited_issue_again(tmp_path):
    folder, out = tmp_path / "issues", tmp_path / "out"
    folder.mkdir()
    for n in NOT_A_BUG:
        (folder / f"{n}.json").write_bytes((TRIAGE / f"{n}.json").read_bytes())
    (folder / "21.json").write_text(json.dumps(gh_issue(21, body="no script here")))
    first = reprokit("--issues-json", folder, "--out", out, "--here")
    assert "3 judged now, 0 judged before" in first.stdout, first.stderr
    assert "0 judged now, 3 judged before" in reprokit("--issues-json", folder, "--out", out, "--here").stdout
    data = json.loads((folder / "183761.json").read_text())
    (folder / "183761.json").write_text(json.dumps({**data, "body": data["body"] + "\n\nEdited: still fails."}))
    data = json.loads((folder / "21.json").read_text())
    (folder / "21.json").write_text(
        json.dumps(
            {
                **data,
                "comments": gh_issue(
                    21, comments=[("someone", "NONE", "me too"), ("other", "NONE", "a smaller one:\n" + SCRIPT)]
                )["comments"],
            }
        )
    )
    third = reprokit("--issues-json", folder, "--out", out, "--here")
    assert "2 judged now, 1 judged before" in third.stdout, third.stderr
    judged = read(out / JOURNAL)
    assert Counter(j.ident for j in judged) == {"#21": 2, "#118959": 1, "#183761": 2} and len(newest(judged)) == 3


def test_an_issue_whose_triage_crashes_is_not_judged_internal_error_and_the_rest_go_on(tmp_path):
    """A request the engine cannot use (no matrix) makes the engine itself raise on an issue with a script; the
    issue without one ends before that point and is judged."""
    crash = issue_json.parse(gh_issue(31, body="fails:\n" + SCRIPT))
    fine = issue_json.parse(gh_issue(32, body="words"))
    request = triage_request.Request(here=True)  # with no matrix (below), the engine itself raises on a script
    done = run_shard(
        [Entry(Path("31.json"), crash), Entry(Path("32.json"), fine)],
        ALL,
        request,
        None,  # type: ignore[arg-type]
        tmp_path,
        jobs=2,
        log=lambda _: None,
    )
    assert done.judged == 2
    kept = newest(read(tmp_path / JOURNAL))
    assert kept["#31"].kind == "not judged" and kept["#31"].retry
    assert kept["#31"].words.startswith("internal error: AttributeError: 'NoneType' object has no attribute")
    assert kept["#32"].kind == "not posted" and "fenced Python block" in kept["#32"].words
    again = run_shard(
        [Entry(Path("31.json"), crash), Entry(Path("32.json"), fine)],
        ALL,
        request,
        None,  # type: ignore[arg-type]
        tmp_path,
        jobs=1,
        log=lambda _: None,
    )
    assert (again.judged, again.skipped) == (1, 1)  # an internal error is judged again; a judgement stands


# --- online: the gh command lines (no network) ----------------------------------------------------------------------


def test_the_gh_query_is_built_as_gh_reads_it():
    assert backlog_fetch.list_command("gh", ("oncall: pt2", "module: inductor"), "open", 300) == [
        "gh",
        "issue",
        "list",
        "--repo",
        "pytorch/pytorch",
        "--label",
        "oncall: pt2",
        "--label",
        "module: inductor",
        "--state",
        "open",
        "--limit",
        "300",
        "--json",
        "number",
    ]
    assert backlog_fetch.view_command("gh", 123) == [
        "gh",
        "issue",
        "view",
        "123",
        "--repo",
        "pytorch/pytorch",
        "--json",
        "number,title,body,author,state,stateReason,closedAt,createdAt,labels,comments,url",  # the author: whose
    ]  # comment's script triage may run
    assert backlog_fetch.numbers_of('[{"number": 5}, {"number": 3}, {"number": true}, {"x": 1}, 7]') == [3, 5]
    with pytest.raises(InputError, match="--state 'merged'"):
        backlog_fetch.list_command("gh", (), "merged", 5)
    with pytest.raises(InputError, match="--limit 0"):
        backlog_fetch.list_command("gh", (), "open", 0)
    with pytest.raises(EnvironmentProblem, match="did not print JSON"):
        backlog_fetch.numbers_of("<html>")


def test_without_gh_the_online_backlog_says_so_in_one_line(tmp_path):
    proc = reprokit(
        "--label",
        "oncall: pt2",
        "--limit",
        "5",
        "--fetch-only",
        "--save",
        tmp_path / "issues",
        env_extra={"PATH": str(tmp_path)},
    )
    assert proc.returncode == 3 and "gh is not installed" in proc.stderr and "Traceback" not in proc.stderr
    for args, said in (
        (["--out", tmp_path], "give one of --issues-json"),
        (["--issues-json", tmp_path, "--merge", tmp_path, "--out", tmp_path], "give one of"),
        (["--issues-json", tmp_path], "--out DIR is needed"),
        (["--issues-json", tmp_path, "--out", tmp_path / "o", "--shard", "3/2"], "K/N"),
        (["--issues-json", tmp_path / "none", "--out", tmp_path / "o"], "not a folder"),
    ):
        proc = reprokit(*args)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


# --- the workflow's shard command, run here on real issues ----------------------------------------------------------

WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "backlog.yml").read_text())


def shard_command(folder: Path, out: Path, shard: str) -> list[str]:
    """backlog.yml's shard step, its variables given and its files named here."""
    step = next(s for s in WORKFLOW["jobs"]["shard"]["steps"] if "--shard" in s.get("run", ""))
    line = (
        step["run"]
        .replace('"$SHARD/$SHARDS"', shard)
        .replace("--issues-json issues", f"--issues-json {folder}")
        .replace("--out shard-out", f"--out {out}")
    )
    words = shlex.split(line)
    assert words[:4] == ["timeout", "320m", "reprokit", "backlog"] and "$" not in line
    return words[4:]


@pytest.mark.e2e
@pytest.mark.timeout(1800)  # a few minutes alone on 2 cores, three times that under load
def test_the_workflows_shard_command_judges_real_issues_here(tmp_path):
    """Two shards of three real issues (tests/fixtures/triage-two, hand-run truth for --here) and a quick one, run
    with this environment's torch, merged: every standing and draft as the truth says, in its group."""
    folder = tmp_path / "issues"
    folder.mkdir()
    numbers = (143702, 146359, 190856)  # a question drafted (fails in Dynamo), still (eager), closed and agreeing
    for n in (*numbers, NOT_A_BUG[0]):
        src = TWO if n in numbers else TRIAGE
        (folder / f"{n}.json").write_bytes((src / f"{n}.json").read_bytes())
    for k in (1, 2):
        proc = reprokit(*shard_command(folder, tmp_path / f"shard-{k}", f"{k}/2"), "--here", timeout=1800)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    proc = reprokit("--merge", tmp_path / "shard-1", tmp_path / "shard-2", "--out", tmp_path / "merged")
    assert proc.returncode == 0, proc.stderr
    kept = {j.number: j for j in read(tmp_path / "merged" / JOURNAL)}
    assert set(kept) == {*numbers, NOT_A_BUG[0]}
    for n in numbers:
        truth = TWO_TRUTH[n]["here"]
        assert kept[n].line().startswith(truth["expected"]), (n, kept[n].line(), TWO_TRUTH[n]["why"])
        assert (kept[n].draft is not None) == truth["post"], n
        assert (tmp_path / "merged" / "drafts" / f"issue-{n}-comment.md").exists() == truth["post"]
        assert [r.release for r in kept[n].releases] and all(r.release == "2.14.1" for r in kept[n].releases)
    page = (tmp_path / "merged" / "backlog.md").read_text()
    sections = {s.split("\n", 1)[0]: s for s in page.split("\n## ")[1:]}
    for n in numbers:
        expected = backlog_page.group(kept[n])
        assert f"issues/{n})" in next(s for title, s in sections.items() if title.startswith(expected)), n


@pytest.mark.e2e
@pytest.mark.timeout(1800)  # a few minutes alone on 2 cores, three times that under load
def test_a_killed_shard_resumes_where_it_stopped(tmp_path):
    """Killed while the third issue's script runs: the two judged before are kept and skipped, a torn line is
    ignored, the third is judged on the second run."""
    folder, out = tmp_path / "issues", tmp_path / "out"
    folder.mkdir()
    for n in NOT_A_BUG:
        (folder / f"{n}.json").write_bytes((TRIAGE / f"{n}.json").read_bytes())
    (folder / "196215.json").write_bytes((TWO / "196215.json").read_bytes())  # its script compiles with "eager"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    args = [
        sys.executable,
        "-m",
        "reprokit",
        "--root",
        str(ROOT),
        "backlog",
        "--issues-json",
        str(folder),
        "--out",
        str(out),
        "--here",
        "--jobs",
        "1",
    ]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and len(read(out / JOURNAL)) < 2 and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = read(out / JOURNAL)
    assert [j.number for j in before] == list(NOT_A_BUG), "the shard finished before it was killed"
    with open(out / JOURNAL, "a") as f:
        f.write('{"ident": "#196215", "kind": "still rep')  # a line the kill tore
    resumed = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 judged now, 2 judged before" in resumed.stdout
    after = read(out / JOURNAL)
    assert [j.number for j in after] == [*NOT_A_BUG, 196215] and after[:2] == before
    assert re.match(TWO_TRUTH[196215]["here"]["expected"], after[2].line()), after[2].line()


# --- 39 real issues, three shards, merged: the groups against the hand-run truth ------------------------------------

RECORDED = ROOT / "bench" / "backlog-here"
GROUP_TRUTH = {e["number"]: e for e in yaml.safe_load((ROOT / "tests" / "fixtures" / "backlog-truth.yaml").read_text())}
GROUP_NAMES = {
    "question": backlog_page.QUESTION,
    "again": backlog_page.AGAIN,
    "different": backlog_page.DIFFERENT,
    "still": backlog_page.STILL,
    "agrees": backlog_page.AGREES,
    "not": backlog_page.NOT,
}
FOLDERS = ("triage", "triage-two", "triage-cuda", "tracker", "triage-ordinary")


def assert_groups_are_the_truth(judgements):
    kept = {j.number: j for j in judgements}
    assert set(kept) == set(GROUP_TRUTH)
    for n, truth in GROUP_TRUTH.items():
        assert backlog_page.group(kept[n]) == GROUP_NAMES[truth["group"]], (n, kept[n].line(), truth["why"])


def test_the_truth_names_every_real_issue_file_once():
    files = [int(p.stem) for f in FOLDERS for p in (ROOT / "tests" / "fixtures" / f).glob("*.json")]
    assert sorted(files) == sorted(GROUP_TRUTH) and len(files) == 39


def test_the_recorded_backlog_of_39_real_issues_gives_the_hand_run_groups():
    """bench/backlog-here: the three shards of run.log merged; the list is the journal rendered, nothing edited."""
    judgements = read(RECORDED / JOURNAL)
    assert_groups_are_the_truth(judgements)
    assert (RECORDED / "backlog.md").read_text() == backlog_page.render(judgements, None, "The backlog")
    assert sorted(p.name for p in (RECORDED / "drafts").iterdir()) == sorted(j.draft for j in judgements if j.draft)


@pytest.mark.e2e
@pytest.mark.heavy  # 39 issues, each script run once or twice: about ten minutes on two cores
@pytest.mark.timeout(3600)  # about 30 minutes under a full 2-core load
def test_three_shards_of_39_real_issues_merged_give_the_hand_run_groups(tmp_path):
    folder = tmp_path / "issues"
    folder.mkdir()
    for f in FOLDERS:
        for path in (ROOT / "tests" / "fixtures" / f).glob("*.json"):
            (folder / path.name).write_bytes(path.read_bytes())
    for k in (1, 2, 3):
        proc = reprokit(
            "--issues-json", folder, "--shard", f"{k}/3", "--here", "--out", tmp_path / f"s{k}", timeout=3600
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = reprokit("--merge", *(tmp_path / f"s{k}" for k in (1, 2, 3)), "--out", tmp_path / "merged")
    assert proc.returncode == 0, proc.stderr
    assert_groups_are_the_truth(read(tmp_path / "merged" / JOURNAL))
