"""Someone else's long line (torch's message, a standing) made short enough for one line of a comment or a record:
cut at the last word boundary before the limit and marked with an ellipsis, never mid-word."""

from __future__ import annotations

ELLIPSIS = "…"


def clipped(text: str, limit: int) -> str:
    """`text` itself when it fits in `limit` characters; else its words up to the limit, then an ellipsis."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS) + 1]
    cut = head.rfind(" ")
    kept = head[:cut] if cut > limit // 2 else head[: limit - len(ELLIPSIS)]  # one huge word: cut it, said so
    return kept.rstrip(" ,;:(") + ELLIPSIS
