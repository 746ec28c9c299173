"""Sandbox, round seven: the host folders the runner trusts (a `--cache DIR` folder). Each attack runs for real: a
link or a foreign folder at the cache's place, a case's deep or folder-heavy tree through the real runner and
bubblewrap, a copy-out cut off at its limit; what the runner does with them is read back from the host's disk and
the record. Speed is not asserted here: `nox -s bench` prints copy-out's MiB/s."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.run.execute import observe
from support import case_script

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another user needs a root runner to make it")
CASE_YAML = """id: {id}
title: t
category: diagnosis
expect:
  repro: {{kind: nonzero-exit}}
"""


def reprokit(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-P", "-m", "reprokit", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools"), **(env or {})},
        cwd=root,
    )


def repo_with_case(tmp_path: Path, case_id: str, source: str) -> Path:
    root = tmp_path / "repo"
    (root / "cases" / case_id).mkdir(parents=True)
    (root / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    (root / "cases" / case_id / "case.yaml").write_text(CASE_YAML.format(id=case_id))
    (root / "cases" / case_id / "repro.py").write_text(source)
    return root


def run_with_cache(tmp_path: Path, source: str, cache: Path, timeout: float = 60):
    return observe(
        case_script(tmp_path, source),
        env=dict(os.environ),
        extra_env={"REPRO_CACHE": str(cache)},
        timeout=timeout,
        writable=(cache,),
    )


def host_files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def remove_chain(folder: Path) -> None:
    """Remove a chain of folders named `d` (and the files in them) however deep, as pytest's own clean-up (a
    recursive walk) cannot: where the code under test left one, the next session would crash in that clean-up."""
    fds = [os.open(folder, os.O_RDONLY)]
    try:
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        for inner, outer in zip(reversed(fds[1:]), reversed(fds[:-1]), strict=True):
            for name in os.listdir(inner):
                os.unlink(name, dir_fd=inner)
            os.rmdir("d", dir_fd=outer)
    finally:
        for fd in fds:
            os.close(fd)


def entries_below(folder: Path) -> int:
    count = 0
    for _top, dirs, names in os.walk(folder):
        count += len(dirs) + len(names)
    return count


# ------------------------------------------------------------------ 1: a link at a host cache folder is never followed

WRITES_A_CACHE_ENTRY = r"""
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
print("SEEN", sorted(os.listdir(os.path.dirname(cache))))
os.makedirs(cache, exist_ok=True)
open(os.path.join(cache, "owned.txt"), "w").write("planted by the case")
raise SystemExit(3)
"""


@pytest.mark.parametrize("link_at", ["case", "variant"])
def test_a_link_at_a_cache_folder_is_refused_in_one_line_and_nothing_runs(tmp_path, link_at):
    # before: DIR/<case> (or DIR/<case>/<variant>@<dtype>) a link to another folder: the runner made its folders
    # there, bound it into the sandbox as the seed (the case read every file) and wrote the case's files into it
    root = repo_with_case(tmp_path, "plants", WRITES_A_CACHE_ENTRY)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.txt").write_text("root's own file")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    if link_at == "case":
        (cache / "plants").symlink_to(victim, target_is_directory=True)
    else:
        (cache / "plants").mkdir(mode=0o755)
        (cache / "plants" / "repro@float32").symlink_to(victim, target_is_directory=True)
    done = reprokit(
        root,
        "run",
        "--host",
        "--target",
        "cpu",
        "--case",
        "plants",
        "--cache",
        str(cache),
        "--out",
        str(tmp_path / "out"),
        "--no-report",
        "--jobs",
        "1",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "is a link" in said[-1] and "rm " in said[-1], done.stderr
    assert sorted(os.listdir(victim)) == ["secret.txt"] and (victim / "secret.txt").read_text() == "root's own file"
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").rglob("*.jsonl"))


@ROOT_ONLY
def test_a_cache_folder_left_to_nobody_or_writable_by_others_is_refused(tmp_path):
    # before: a folder an older version left owned by nobody (or one any user can write) was used as it was
    from reprokit.model.schema import InputError
    from reprokit.run.host_folders import cache_folder

    cache = tmp_path / "cache"
    (cache / "case" / "repro@float32").mkdir(parents=True)
    os.chown(cache / "case" / "repro@float32", 65534, 65534)
    with pytest.raises(InputError, match=r"owned by uid 65534 \(nobody\).*rm -rf"):
        cache_folder(cache, "case", "repro@float32")
    os.chown(cache / "case" / "repro@float32", 0, 0)
    os.chmod(cache / "case", 0o777)
    with pytest.raises(InputError, match="writable by its group or others.*chmod go-w"):
        cache_folder(cache, "case", "repro@float32")
    os.chmod(cache / "case", 0o755)
    assert cache_folder(cache, "case", "repro@float32") == cache / "case" / "repro@float32"


@ROOT_ONLY
def test_a_folder_the_run_writes_that_another_user_owns_is_refused_before_the_run(tmp_path):
    # before: any folder was bound and written, whoever owned it (a folder swapped in by someone who can write a
    # parent of it is theirs)
    from reprokit.model.schema import InputError

    cache = tmp_path / "cache"
    cache.mkdir()
    os.chown(cache, 1234, 1234)
    with pytest.raises(InputError, match="owned by uid 1234, not by this runner"):
        run_with_cache(
            tmp_path, "import os\nopen(os.path.join(os.environ['REPRO_CACHE'], 'k'), 'w').write('k')\n", cache
        )
    assert os.listdir(cache) == []


def test_cache_folders_the_runner_makes_are_writable_by_it_only_whatever_its_umask(tmp_path):
    from reprokit.run.host_folders import cache_folder

    old = os.umask(0o002)  # a laptop's usual umask: group-writable folders, which the check refuses
    try:
        made = cache_folder(tmp_path / "fresh", "case", "repro@float32")
    finally:
        os.umask(old)
    for folder in (tmp_path / "fresh", tmp_path / "fresh" / "case", made):
        assert folder.stat().st_mode & 0o777 == 0o755, folder


def test_a_link_swapped_in_for_the_host_folder_mid_run_is_not_followed_by_copy_out(tmp_path):
    # the keeper writes through the descriptor the runner opened: a link put where the folder was is never followed
    from reprokit.child import copy_out, outbox

    made = tmp_path / "made"
    (made / "sub").mkdir(parents=True)
    (made / "sub" / "kernel.so").write_bytes(b"k" * 100)
    spool = tmp_path / "spool"
    with open(spool, "wb") as fh:
        outbox.send([str(made)], fh.fileno(), 1 << 20)
    host = tmp_path / "host"
    host.mkdir()
    fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        victim = tmp_path / "victim"
        victim.mkdir()
        host.rename(tmp_path / "moved")
        host.symlink_to(victim, target_is_directory=True)
        done = copy_out.receive(str(spool), [fd], 1 << 20)
    finally:
        os.close(fd)
    assert done.files == 1 and os.listdir(victim) == []
    assert (tmp_path / "moved" / "sub" / "kernel.so").read_bytes() == b"k" * 100


# ------------------------------------------------------------------ 2: folders count; a cut-off copy-out stays in budget

FOLDER_CHAINS = r"""
import os
d = os.environ["REPRO_CACHE"]
for n in range(40):
    path = os.path.join(d, f"chain-{n}", *(["f"] * 20))
    os.makedirs(path)
    open(os.path.join(path, "leaf"), "w").write("x")
print("MADE 40 CHAINS")
"""


def test_folders_count_against_the_files_budget(tmp_path, monkeypatch):
    # before: 40 budgeted files at the bottom of their own chains brought every folder along, over no budget
    monkeypatch.setenv("REPROKIT_CACHE_FILES", "100")
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, FOLDER_CHAINS, cache)
    assert "MADE 40 CHAINS" in obs.stdout_tail, obs.stderr_tail
    assert entries_below(cache) <= 100
    assert obs.status == "over-budget" and obs.over_budget.startswith("cache "), (obs.status, obs.contained)


CUT_OFF = r"""
import os
d = os.environ["REPRO_CACHE"]
print("SEEDED", len(os.listdir(d)))
for name in os.listdir(d):
    os.unlink(os.path.join(d, name))
open(os.path.join(d, "fresh.bin"), "wb").write(b"f" * (8 << 20))
raise SystemExit(3)
"""


def test_a_copy_out_cut_off_at_its_limit_leaves_the_folder_within_its_budget_and_says_so(tmp_path, monkeypatch):
    # before: a copy-out killed at its limit removed nothing (the folder grew past its budget run after run) and the
    # record held no containment line
    monkeypatch.setenv("REPROKIT_CACHE_BUDGET", str(16 << 20))
    monkeypatch.setenv("REPROKIT_COPY_OUT_SECONDS", "0")  # the limit is passed as soon as copy-out begins
    cache = tmp_path / "cache"
    cache.mkdir()
    for n in range(4):  # what an older version left: 32 MiB against a 16 MiB budget
        (cache / f"stale-{n}.bin").write_bytes(b"s" * (8 << 20))
    obs = run_with_cache(tmp_path, CUT_OFF, cache)
    assert "SEEDED" in obs.stdout_tail, obs.stderr_tail
    assert (obs.status, obs.exit_code) == ("fail", 3), (obs.status, obs.exit_code, obs.contained)
    assert "copy-out cut off" in obs.contained and "landlock ABI" in obs.contained
    assert sum(host_files(cache).values()) <= 16 << 20 and not [n for n in host_files(cache) if "stale" in n]


def test_a_copy_out_cut_off_before_writing_removes_what_the_run_did_not_leave(tmp_path):
    # the keeper's own order, on a real spool: leftovers go first, so a stop at the deadline leaves no more than the
    # new set (the old file of a name the run kept stays only where it has the new one's size)
    from reprokit.child import copy_out, outbox

    made = tmp_path / "made"
    made.mkdir()
    (made / "same.bin").write_bytes(b"n" * 10)
    (made / "grew.bin").write_bytes(b"n" * 20)
    spool = tmp_path / "spool"
    with open(spool, "wb") as fh:
        outbox.send([str(made)], fh.fileno(), 1 << 20)
    host = tmp_path / "host"
    (host / "old" / "deep").mkdir(parents=True)
    (host / "old" / "deep" / "x").write_bytes(b"o" * 1000)
    (host / "same.bin").write_bytes(b"o" * 10)
    (host / "grew.bin").write_bytes(b"o" * 5000)
    fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY)
    try:
        done = copy_out.receive(str(spool), [fd], 1 << 20, deadline=0.0)
    finally:
        os.close(fd)
    assert done.cut_off and done.files == 0
    assert host_files(host) == {"same.bin": 10}


# ------------------------------------------------------------------ 3: deep trees, without recursion

DEEP_TREE = r"""
import os
d = os.environ["REPRO_CACHE"]
open(os.path.join(d, "beside.txt"), "w").write("beside the tree")
fd = os.open(d, os.O_RDONLY)
for _ in range(1100):  # by descriptor: the path would pass PATH_MAX
    os.mkdir("d", dir_fd=fd)
    nested = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nested
print("MADE 1100 LEVELS")
raise SystemExit(3)
"""


def test_a_1100_level_tree_crashes_nothing_and_the_case_s_exit_stays_its_own(tmp_path):
    # before: the sandbox's first process crashed in copy-out (a recursive walk): exit 3 recorded as a SIGKILL crash,
    # and the files beside the tree lost
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, DEEP_TREE, cache)
    assert "MADE 1100 LEVELS" in obs.stdout_tail, obs.stderr_tail
    assert obs.exit_code == 3 and obs.signal is None, (obs.status, obs.signal, obs.stderr_tail)
    assert obs.status == "over-budget" and "over cache budget" in obs.contained
    assert (cache / "beside.txt").read_text() == "beside the tree"
    depth, folder = 0, cache / "d"
    while folder.is_dir():
        depth, folder = depth + 1, folder / "d"
    assert depth <= 32


def test_an_1100_level_tree_left_on_the_host_is_removed(tmp_path):
    # before: the keeper's removal (os.fwalk, recursive) failed past about 1,000 levels and the failure was dropped
    fd = os.open(tmp_path, os.O_RDONLY)
    os.mkdir("cache", dir_fd=fd)
    top = os.open("cache", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = top
    for _ in range(1100):
        os.mkdir("d", dir_fd=fd)
        nested = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nested
    os.close(fd)
    cache = tmp_path / "cache"
    try:
        obs = run_with_cache(
            tmp_path,
            "import os\nopen(os.path.join(os.environ['REPRO_CACHE'], 'k'), 'w').write('k')\nraise SystemExit(3)\n",
            cache,
        )
    finally:
        remove_chain(cache)
    assert (obs.status, obs.exit_code) == ("fail", 3), (obs.status, obs.contained, obs.stderr_tail)
    assert sorted(os.listdir(cache)) == ["k"]


def test_removing_a_1100_level_tree_needs_no_recursion(tmp_path):
    from reprokit.child.folder_tree import remove_tree

    fd = os.open(tmp_path, os.O_RDONLY)
    for level in range(1100):
        os.mkdir("d", dir_fd=fd)
        if level % 100 == 0:
            os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
        nested = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nested
    os.close(fd)
    try:
        remove_tree(str(tmp_path / "d"))
        assert not (tmp_path / "d").exists()
    finally:
        remove_chain(tmp_path)


# ------------------------------------------------------------------ 4: new-case's seeding, by the tokenizer's lines


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\x85", "\x1c", "\x1d", "\x1e"])
def test_seeding_lands_after_the_last_import_whatever_str_splitlines_would_count(tmp_path, separator):
    # before: the seed was inserted by str.splitlines' count, which a form feed (U+2028, U+0085, \x1c-\x1e) before the
    # last import put off by one: `random.seed(0)` landed above `import random` (NameError)
    from reprokit.contrib.seeding import seeded

    text = f"# drawn{separator}at random\nimport os\nimport random\nprint(random.random(), os.sep)\n"
    new, calls = seeded(text)
    assert calls == ["random.seed(0)"]
    script = tmp_path / "repro.py"
    script.write_text(new, encoding="utf-8")
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60) for _ in "12"]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout  # seeded: the same draw on every run


def test_a_draw_before_the_last_import_is_not_seeded_after_it(tmp_path):
    # before: the seed went after the last import, below a draw made before it, which stayed unseeded
    from reprokit.contrib.seeding import seeded, why_not_seeded

    text = "import random\nx = random.random()\nimport os\nprint(x, os.sep)\n"
    assert seeded(text) == (text, [])
    assert "before its last import" in why_not_seeded(text)


def test_new_case_refuses_a_script_whose_draw_comes_before_its_last_import(tmp_path):
    # before: the case was created with the seed below the draw, and passed `validate`
    from support import empty_repository, run_reprokit

    repo = empty_repository(tmp_path)
    script = tmp_path / "draw_first.py"
    script.write_text("import random\nx = random.random()\nimport os\nassert x < 2, os.sep\n")
    made = run_reprokit(repo, "new-case", "draw-first", "--from", str(script), "--wrong-result")
    assert made.returncode == 2 and "not created" in made.stderr, made.stdout + made.stderr
    assert "not seeded: draw_first.py" in made.stdout and "before its last import" in made.stdout
    assert not (repo / "cases" / "draw-first").exists()
