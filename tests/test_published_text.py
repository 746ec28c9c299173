"""What a case controls (its exception's class name and message, its output) cannot break or inject into what we
publish: Markdown tables, JUnit XML, autofix pull-request bodies, progress lines in a CI log."""

from xml.etree import ElementTree as ET

from reprokit.contrib import autofix
from reprokit.model.verdict import Verdict
from reprokit.publish import markdown
from reprokit.publish.pages import cells, ci_artifacts
from reprokit.run import host_sitting
from reprokit.store.views import View
from support import record

HOSTILE_CLASS = "evil.`x`|y<script>alert(1)</script>"
HOSTILE_TEXT = "\x1b[31mred\x1b[0m | <img src=x onerror=alert(1)> ``` \x00 \x07\n::error file=a,line=1::pwned"


def hostile():
    return record(
        case="c",
        verdict="fails-differently",
        exception=HOSTILE_CLASS,
        message=HOSTILE_TEXT,
        why=f"expected X, got {HOSTILE_CLASS}\n::add-mask::x",
        status="fail",
        stderr_tail="```\n# injected heading outside the block\n" + HOSTILE_TEXT,
    )


def test_markdown_cells_hold_no_raw_pipe_backtick_html_or_control_character():
    row = markdown.table([[cells.outcome_text(hostile())]], ["outcome"]).splitlines()[-1]
    unescaped = row.replace("\\|", "").replace("\\`", "")
    assert unescaped.count("|") == 2  # the table's own two borders: one cell, as rendered
    assert "`x`" not in row and "<script>" not in row and "<img" not in row
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in row)


def test_junit_xml_stays_valid_xml():
    xml = ci_artifacts.junit_xml(View("cpu", "cases", "2.13.0", [hostile()], []))
    suite = ET.fromstring(xml.split("\n", 1)[1])
    assert suite.find("testcase/failure") is not None
    assert "\x1b" not in xml and "\x00" not in xml


def test_autofix_body_keeps_case_output_inside_its_block_and_has_no_nul():
    rec = hostile()
    body = autofix.body(
        [(rec.key, Verdict.REPRODUCES, Verdict.FAILS_DIFFERENTLY)], View("cpu", "cases", "2.13.0", [rec], [])
    )
    assert "\x00" not in body
    lines = body.splitlines()
    opening = next(i for i, line in enumerate(lines) if line.startswith("````"))
    closing = next(i for i, line in enumerate(lines) if i > opening and line == lines[opening].rstrip())
    assert opening < lines.index("# injected heading outside the block") < closing
    row = next(line for line in lines if line.startswith(f"| `{rec.key}`"))
    assert row.replace("\\|", "").count("|") == 5


def test_no_progress_line_is_a_workflow_command_or_carries_escapes():
    printed = []
    host_sitting._progress(1, printed.append)(hostile())
    text = "\n".join(printed)
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert len(text.splitlines()) == 1 and "\x1b" not in text
