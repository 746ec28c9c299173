"""The site's badges, one per target of matrix.yaml: `badges/<target>.json`, a shields.io endpoint (the same JSON as
reports/<target>/badge.json, ci_artifacts.badge), and `badges/<target>.svg`, the same label, message and colour drawn
as a flat badge, for a README that embeds an image without asking shields.io. A target no run has recorded gets a grey
"not recorded" badge. Deterministic: the text's width is estimated from its characters, not measured with a font."""

from __future__ import annotations

import json
from dataclasses import dataclass
from xml.sax.saxutils import escape

from reprokit.publish.pages.ci_artifacts import BADGE_LABEL, badge
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
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
        f'aria-label="{escape(title, {chr(34): "&quot;"})}"><title>{title}</title>'
        f'<rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
        f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">'
        f'<text x="{label_x}" y="14">{escape(label)}</text><text x="{message_x}" y="14">{escape(message)}</text>'
        "</g></svg>\n"
    )


def badges(p: Published) -> dict[str, str]:
    """badges/<target>.json and .svg for every target of matrix.yaml, in its order."""
    out = {}
    for target in p.descriptions:
        view = p.views.get(target)
        text = (
            badge(view, {c.case.id: c for c in p.cases})
            if view
            else json.dumps(
                {
                    "schemaVersion": 1,
                    "label": f"{BADGE_LABEL} ({target})",
                    "message": "not recorded",
                    "color": "lightgrey",
                },
                sort_keys=True,
            )
            + "\n"
        )
        found = json.loads(text)
        out[f"badges/{slug(target)}.json"] = text
        out[f"badges/{slug(target)}.svg"] = svg(found["label"], found["message"], found["color"])
    return out


@dataclass(frozen=True)
class Badge:
    """One target's badge as a page offers it: the image, and the Markdown that embeds it linked to the target's grid
    (`base`: the site's address, which the links start with; site.js makes them absolute where it is not given)."""

    target: str
    label: str
    message: str
    base: str

    @property
    def svg(self) -> str:
        return f"badges/{slug(self.target)}.svg"

    @property
    def endpoint(self) -> str:
        return f"badges/{slug(self.target)}.json"

    @property
    def grid(self) -> str:
        return f"grid-{slug(self.target)}.html"

    @property
    def alt(self) -> str:
        return f"{self.label}: {self.message}"

    @property
    def markdown(self) -> str:
        return f"[![{self.alt}]({self.base}{self.svg})]({self.base}{self.grid})"


def offered(files: dict[str, str], base: str) -> dict[str, Badge]:
    """Target -> its Badge, from the badges' endpoint files (`badges`' output)."""
    out = {}
    for name, text in files.items():
        if name.endswith(".json"):
            found = json.loads(text)
            target = name.removeprefix("badges/").removesuffix(".json")
            out[target] = Badge(target, found["label"], found["message"], base)
    return out
