"""The words people search hardware by, each leading to the targets of matrix.yaml it names: "H200" (the card a target's
records were made on), "910b", "Ascend", "rocm", "MI300" (a prefix of a model: "MI300X"). Taken from matrix.yaml (the
target's name, family, device kind, and the model numbers of its description and device pattern) and from the devices
its recorded runs saw, never written here; the search (site.js) answers such a word with the target: its grid where a
run is recorded, "not recorded" with how to contribute a run where none is."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.model.matrix import Target
from reprokit.publish.render import Published
from reprokit.publish.site.grid import grid_file

# A word of a description or a device name that names hardware: it holds a digit ("h100", "910b", "sm_90", "gfx942"),
# and it is no bare number shorter than three digits ("64" of "x86-64").
_TOKEN = re.compile(r"[a-z0-9_]+")


def _model_words(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if any(c.isdigit() for c in t) and not (t.isdigit() and len(t) < 3)}


@dataclass(frozen=True)
class TargetWords:
    name: str
    hardware: str  # matrix.yaml's description
    grid: str  # its page
    recorded: bool  # a run of it is recorded (else: not recorded, with how to contribute one)
    ran_on: tuple[str, ...]  # the devices its recorded runs saw, as the records name them
    words: frozenset[str]


def target_words(name: str, target: Target, grid: str, ran_on: list[str], recorded: bool) -> TargetWords:
    """A target's search words: its name, family and device kind, the model numbers of its description, device
    pattern and architecture, and of the devices its recorded runs saw (`ran_on`); `recorded`: it has a current view."""
    words = {name.lower(), str(target.family).lower(), str(target.device.kind).lower()}
    for text in (target.description, target.device.name_pattern or "", target.device.gfx_arch or "", *ran_on):
        words |= _model_words(text)
    return TargetWords(name, target.description, grid, recorded, tuple(ran_on), frozenset(words))


def search_json(every: list[TargetWords]) -> dict:
    """What site.js reads: word -> the targets it names (matrix.yaml's order), and per target what the note says."""
    words: dict[str, list[str]] = {}
    for t in every:
        for word in sorted(t.words):
            words.setdefault(word, []).append(t.name)
    return {
        "words": dict(sorted(words.items())),
        "targets": {
            t.name: {"hardware": t.hardware, "grid": t.grid, "recorded": t.recorded, "ran_on": list(t.ran_on)}
            for t in every
        },
    }


def hardware_search(p: Published) -> dict:
    """search_json of every target of matrix.yaml."""
    return search_json(
        [
            target_words(name, t, grid_file(name), p.ran_on.get(name, []), name in p.views)
            for name, t in p.targets.items()
        ]
    )
