"""The site's badges, one per target of matrix.yaml: `badges/<target>.json`, a shields.io endpoint (the same JSON as
reports/<target>/badge.json, ci_artifacts.badge), and `badges/<target>.svg`, the same label, message and colour drawn
as a flat badge, for a README that embeds an image without asking shields.io. A target no run has recorded gets a grey
"not recorded" badge. Deterministic: the text's width is estimated from its characters, not measured with a font."""

from __future__ import annotations

import json
from xml.sax.saxutils import escape

from reprokit.publish.pages.ci_artifacts import badge
from reprokit.publish.render import Published
from reprokit.publish.site.rows import slug

# shields.io's named colours the endpoint JSON uses, as their hex values
COLOURS = {"brightgreen": "#4c1", "orange": "#fe7d37", "red": "#e05d44", "lightgrey": "#9f9f9f"}
NARROW, WIDE = set("fijlrtI.,:;!|()[] '"), set("mwMW%@")


def text_width(text: str) -> int:
    """An estimate of the text's width in px at 11 px Verdana, the shields style's font."""
    return round(sum(3.5 if c in NARROW else 10 if c in WIDE else 7 for c in text))


def svg(label: str, message: str, color: str) -> str:
    left, right = text_width(label) + 10, text_width(message) + 10
    fill, title = COLOURS.get(color, "#9f9f9f"), escape(f"{label}: {message}")
    label_x, message_x = left / 2, left + right / 2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
            f'aria-label="{escape(title, {chr(34): "&quot;"})}"><title>{title}</title>'
            f'<rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
            f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">'
            f'<text x="{label_x}" y="14">{escape(label)}</text><text x="{message_x}" y="14">{escape(message)}</text>'
            "</g></svg>\n")


def badges(p: Published) -> dict[str, str]:
    """badges/<target>.json and .svg for every target of matrix.yaml, in its order."""
    out = {}
    for target in p.descriptions:
        view = p.views.get(target)
        text = badge(view) if view else json.dumps({"schemaVersion": 1, "label": f"torch.compile repros ({target})",
                                                   "message": "not recorded", "color": "lightgrey"},
                                                  sort_keys=True) + "\n"
        found = json.loads(text)
        out[f"badges/{slug(target)}.json"] = text
        out[f"badges/{slug(target)}.svg"] = svg(found["label"], found["message"], found["color"])
    return out
