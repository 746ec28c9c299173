"""The documentation a newcomer reads: a short README whose Quick start keeps its two commands, docs/verdicts.md as
model/verdict.py generates it, and every relative link of the Markdown files pointing at a file that exists."""

import re

from reprokit.publish.pages import verdict_doc
from support import ROOT

DOCS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "tests" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_docs_verdicts_is_what_model_verdict_generates():
    committed = (ROOT / verdict_doc.PATH).read_text(encoding="utf-8")
    assert committed == verdict_doc.markdown(), f"{verdict_doc.PATH} is stale: run `{verdict_doc.COMMAND}`"


def test_the_readme_is_short_and_its_quick_start_holds_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    for command in ("nox -s repro-cpu", "nox -s tests", "reprokit run --target cpu --case", "--out"):
        assert command in quick_start, command


def test_every_relative_link_points_at_a_file_that_exists():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (doc.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, broken
