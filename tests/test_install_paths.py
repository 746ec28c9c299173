"""A record holds what torch said, never where the recording machine keeps it: graph-break reasons name torch's files
as `.../site-packages/torch/...`, in a new record and in every committed one."""

import json
import re
from pathlib import Path

from reprokit.model.untrusted_text import without_install_paths
from support import committed_files, record

ROOT = Path(__file__).resolve().parents[1]
HOST_PATH = re.compile(r"(^|[\s`'\"])/(root|home|tmp|usr|opt|work)\b|\.cache/|\.nox/")
REASON = (
    "Attempted to call function marked as skipped\n  Explanation: Dynamo developers have intentionally marked "
    "that the function `backward` in file `{}/torch/autograd/__init__.py` should not be traced."
)


def test_a_new_record_names_torch_s_files_without_the_machine_s_install_prefix():
    venv = "/root/.nox/repro-cpu/lib/python3.11/site-packages"
    rec = record(dynamo={"graph_breaks": 1, "graph_break_reasons": [REASON.format(venv)], "recompiles": 0})
    assert rec.dynamo["graph_break_reasons"] == [REASON.format(".../site-packages")]
    assert rec.dynamo["graph_breaks"] == 1
    again = type(rec).model_validate_json(rec.model_dump_json())  # what the store reads back is the same
    assert again.dynamo == rec.dynamo


def test_no_committed_record_holds_a_host_path_in_its_graph_break_reasons():
    found = []
    for path in committed_files():
        for line in path.read_text(encoding="utf-8").splitlines():
            reasons = (json.loads(line).get("dynamo") or {}).get("graph_break_reasons") or []
            found += [(path.name, r[:120]) for r in reasons if HOST_PATH.search(r)]
    assert not found, found[:3]


def test_what_torch_printed_is_kept_without_a_home_folders_interpreter_or_environment():
    said = (
        "g++ x.cpp -I/root/.pyenv/versions/3.11.7/include/python3.11 -L/root/.pyenv/versions/3.11.7/lib "
        "-I/home/ci/.cache/reprokit/envs/torch-2.8.0/lib/python3.11/site-packages/torch/include\n"
        "  from /root/.cache/reprokit/e"
    )
    rec = record(message=said, stderr_tail=said)
    assert (
        rec.message
        == rec.stderr_tail
        == ("g++ x.cpp -I.../include/python3.11 -L.../lib -I.../site-packages/torch/include\n  from ...")
    )


def test_no_committed_record_or_output_tail_names_a_home_folder_or_this_checkouts_venv():
    home = re.compile(r"/root/|/home/[^/\s\"]+/|/work/venv")
    found = [path.name for path in committed_files(outputs=True) if home.search(path.read_text(encoding="utf-8"))]
    assert not found


def test_a_folder_of_the_temporary_folder_is_cut_to_the_folder_below_it():
    said = (
        'File "/tmp/fresh42/cases/x/repro.py", line 3\n/tmp/reprokit-jc29nj4p/inductor/l5/c.cpp:3:4: error\n'
        "g++ -I/tmp/reprokit-jc29nj4p/tmp/torchinductor_nobody/precompiled_headers/a.h\n"
        "/tmp/python-build.20260509073455.222/Python-3.11.7/Python/ceval.c"
    )
    rec = record(message=said, stderr_tail=said)
    assert rec.stderr_tail == (
        'File ".../cases/x/repro.py", line 3\n.../inductor/l5/c.cpp:3:4: error\n'
        "g++ -I.../precompiled_headers/a.h\n"
        ".../Python-3.11.7/Python/ceval.c"
    )


def test_every_committed_record_and_output_tail_is_as_a_new_record_would_hold_it():
    """What without_install_paths cuts (a folder of the temporary folder among them) is cut in every committed file."""
    found = []
    for path in committed_files(outputs=True):
        for line in path.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            found += [
                (path.name, data.get("case"), field)
                for field in ("message", "stderr_tail", "stdout_tail")
                if isinstance(data.get(field), str) and without_install_paths(data[field]) != data[field]
            ]
    assert not found, found[:3]


def test_a_checkouts_and_a_carried_site_folders_root_are_cut_as_install_paths_are():
    said = (
        'File "/work/wt-ledger/cases/x/repro.py", line 3\n  File "/work/main/.dev43/tools/reprokit/child/probe.py"'
        '\n  File "/srv/sweep-wt/sweep/cell.py", line 76\n/opt/ao-site/torchao/quant_api.py:1731: SyntaxWarning\n'
        "of binary: /opt/torch/.venv/bin/python3\nsee https://github.com/o/r/tree/main/cases/x and x.contiguous()/view"
    )
    rec = record(message=said, stderr_tail=said)
    assert (
        rec.message
        == rec.stderr_tail
        == (
            'File ".../cases/x/repro.py", line 3\n  File ".../tools/reprokit/child/probe.py"\n  File ".../sweep/cell.py", '
            "line 76\n.../torchao/quant_api.py:1731: SyntaxWarning\nof binary: .../bin/python3\n"
            "see https://github.com/o/r/tree/main/cases/x and x.contiguous()/view"
        )
    )


# Absolute paths a record may name: no machine's own folder, but what every machine has at that place (a device,
# the system's libraries and CUDA_HOME under /usr, the folder torch's binaries were built in, as torch itself says).
SYSTEM_PATH = re.compile(r"/(dev|proc|sys|usr|pytorch)/")
ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/)\]-])/[A-Za-z_.][\w.+-]*/")


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def test_no_committed_file_of_the_results_names_an_absolute_path_of_a_machine():
    """A checkout, a worktree, a carried site or environment folder of the recording machine: none, in any field of any
    records, output or runs file (`python -m reprokit.store.write_back` cuts them after an import)."""
    found = []
    for path in committed_files(outputs=True, runs=True):
        for line in path.read_text(encoding="utf-8").splitlines():
            for text in strings(json.loads(line)):
                found += [
                    (path.name, m.group()) for m in ABSOLUTE_PATH.finditer(text) if not SYSTEM_PATH.match(m.group())
                ]
    assert not found, sorted(set(found))[:5]


def test_the_write_back_cuts_a_stores_records_and_tails_and_is_re_runnable(tmp_path):
    from reprokit.store.store import Store

    said = 'Traceback:\n  File "/home/u/src/reprokit/cases/c/repro.py", line 4\nValueError: no'
    Store(tmp_path / "results").merge([record(message=said, stderr_tail=said)])
    for path in (tmp_path / "results").glob("*/*/*.jsonl"):  # the lines as an older runner kept them
        path.write_text(path.read_text().replace(".../cases/c/", "/home/u/src/reprokit/cases/c/"))
    first = run_module("reprokit.store.write_back", str(tmp_path / "results"))
    assert first.returncode == 0 and "2 file(s)" in first.stdout, first.stdout + first.stderr
    text = "".join(p.read_text() for p in (tmp_path / "results").glob("*/*/*.jsonl"))
    assert "/home/u" not in text and text.count(".../cases/c/repro.py") == 2
    again = run_module("reprokit.store.write_back", str(tmp_path / "results"))
    assert again.returncode == 0 and "nothing to write back" in again.stdout


def run_module(module, *args):
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )


def test_an_imported_records_output_tails_are_cut_as_a_run_cuts_them():
    """A store folder from another machine: its tails are read as that machine wrote them; import cuts its checkout
    as a run here would (the write-back is then needed only when the rule changes)."""
    from reprokit.store.import_checks import as_a_run_cuts

    rec = record(stderr_tail="ok")
    said = 'File "/home/runner/work/reprokit/reprokit/cases/c/repro.py", line 4\n'
    rec.__dict__.update(stderr_tail=said, stdout_tail=said)  # as the store fills tails in: unvalidated
    cut = as_a_run_cuts(rec)
    assert cut.stderr_tail == cut.stdout_tail == 'File ".../cases/c/repro.py", line 4\n'


def test_an_imported_records_stage_and_ladder_stay_the_records_own_words():
    """Cutting an imported record's text keeps its stage and ladder the record's enums (they are written back as the
    same words, without pydantic's serializer warning that a plain string stands where a Stage is expected)."""
    import warnings

    from reprokit.model.records import RunStatus, Stage, stored_fields
    from reprokit.store.import_checks import as_a_run_cuts

    rec = record(stage="aot_autograd", ladder={"eager": "pass", "aot_eager": "fail"})
    cut = as_a_run_cuts(rec)
    assert cut.stage is Stage.AOT_AUTOGRAD and cut.ladder == {"eager": RunStatus.PASS, "aot_eager": RunStatus.FAIL}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert stored_fields(cut)["stage"] == "aot_autograd"
