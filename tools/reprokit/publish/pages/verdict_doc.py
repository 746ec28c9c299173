"""docs/verdicts.md: the verdict words as the site's glossary gives them (glossary.entries(), which reads
model/verdict.py), so the manual cannot disagree with the code. `python -m reprokit.publish.pages.verdict_doc` rewrites it;
tests/test_docs.py fails when the committed file differs."""

from __future__ import annotations

import sys
from pathlib import Path

from reprokit.model.verdict import Verdict
from reprokit.publish.glossary import BY_MACHINE, FIXES, entries
from reprokit.publish.markdown import table

PATH = Path("docs") / "verdicts.md"
COMMAND = "PYTHONPATH=tools python -m reprokit.publish.pages.verdict_doc"


def _text(words: str) -> str:
    return words.replace("|", "\\|")


def markdown() -> str:
    rows = [
        [f"{e.verdict.symbol} `{e.word}`", f"`{e.short}`", _text(e.meaning), "; ".join(map(_text, e.counts))]
        for e in entries()
    ]
    both = (Verdict.SKIPPED, Verdict.FLAKY)
    repros = ", ".join(f"`{v}`" for v in Verdict if v not in FIXES and v not in both)
    return "\n".join(
        [
            "# Verdicts",
            "",
            f"<!-- Generated from tools/reprokit/model/verdict.py by `{COMMAND}`; do not edit by hand. -->",
            "",
            f"Every run of a case's variant gets one verdict: a repro (and a sweep cell) one of {repros}; a fix "
            f"(`fixed.py`, or the article's own `article_fix.py`) {' or '.join(f'`{v}`' for v in FIXES)}; either may be "
            f"{' or '.join(f'`{v}`' for v in both)}. The site's `glossary.html` shows the same words, meanings and counts.",
            "",
            table(rows, ["verdict", "in the grids", "what it means", "what it counts toward"]),
            "",
            f"A verdict is also **machine-dependent** (`{BY_MACHINE}` in the grids) when two machines of one target gave "
            "it differently on the same torch release and the same case content: like a flaky one, it is never a change, "
            "a fix or a figure of a rate. How the two rates are made from these words: "
            "[reading a report](reading-a-report.md).",
            "",
        ]
    )


def main(argv: list[str]) -> int:
    """Write docs/verdicts.md under the repository root (the working directory), or with --check say whether it
    differs."""
    path, text = Path.cwd() / PATH, markdown()
    if "--check" in argv:
        if path.exists() and path.read_text(encoding="utf-8") == text:
            return 0
        print(f"{PATH} differs from model/verdict.py; regenerate it with: {COMMAND}", file=sys.stderr)
        return 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
