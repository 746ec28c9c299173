"""What every input model shares: the constrained string types, `InputError`, strict frozen models, reading YAML.

Every file that reads YAML goes through `read_yaml` and a `load_*` of case.py, matrix.py or claims.py, so a bad
field always surfaces as one `InputError` line naming the file, the field and what is allowed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, TypeAdapter, ValidationError

from reprokit.model.choices import CATEGORIES

Category = Literal[CATEGORIES]  # type: ignore[valid-type]
DType = Literal["float32", "float64", "bfloat16", "float16", "float8_e4m3fn"]
DeviceKind = Literal["cpu", "cuda", "rocm", "npu"]
Family = Literal["cpu", "cuda", "rocm", "ascend"]

# Values that end up in Dockerfiles and shell lines: one token, no whitespace, no shell metacharacters.
Token = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$", max_length=200)]
CaseId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*[a-z0-9]$", max_length=80)]
Url = Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$")]
ISSUE_URL = re.compile(r"^https://github\.com/pytorch/pytorch/issues/\d+$")
# A package index that reaches a Dockerfile's RUN line: an https URL made only of characters no shell interprets.
IndexUrl = Annotated[
    str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/%+-]*)?$", max_length=300)
]
# Text that reaches a Dockerfile LABEL "...": one line without quotes, backslashes or shell expansions.
LabelText = Annotated[str, StringConstraints(pattern=r'^[^\n\r"\\$`]+$', max_length=200)]
OneLine = Annotated[str, StringConstraints(pattern=r"^[^\n\r]*$", min_length=1)]
PythonVersion = Annotated[str, StringConstraints(pattern=r"^3\.[0-9]{1,2}$")]  # X.Y, e.g. 3.12


def conforms(kind: Any, value: str) -> bool:
    """Whether value passes one of the constrained string types above (Token, CaseId, ...); Any: an Annotated alias
    is a type form, not a `type`."""
    try:
        TypeAdapter(kind).validate_python(value)
        return True
    except ValidationError:
        return False


class InputError(Exception):
    """Bad input from a user-edited file: printed as one line, never as a traceback."""


class EnvironmentProblem(InputError):
    """What this machine lacks or failed at, not what was typed: torch not importable, no Docker engine, no usable
    bubblewrap, no uv or gh, an environment that could not be built (the disk, the network). One line too, with its
    own exit status (3, where bad input is 2), so that a script or CI job can tell "fix the command" from "fix the
    machine". A kind of InputError so that every `except InputError` that handles it today still does."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def describe_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"]
    if first["type"] == "literal_error":
        msg = f"must be {first['ctx']['expected']} (got {first['input']!r})"
    elif first["type"] == "extra_forbidden":
        msg = "is not a known field"
    elif first["type"] == "missing":
        msg = "is required" + (
            " (fails, works or measures: what the article says about this code)"
            if where.endswith("article.stance")
            else ""
        )
    elif first["type"] == "string_pattern_mismatch":
        msg = f"{first['input']!r} is not allowed (must match {first['ctx']['pattern']})"
    return _short(f"{where}: {msg}", 300)


MAX_YAML_BYTES = 1 << 20  # matrix.yaml and claims.yaml are tens of KB; a case.yaml a few


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader without anchors and aliases: a few hundred bytes of nested aliases expand to gigabytes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed", self.peek_event().start_mark
            )
        return super().compose_node(parent, index)


def _short(text: object, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def read_yaml(path: Path, aliases: bool = True) -> object:
    """The YAML document at path (at most MAX_YAML_BYTES); aliases=False for contributors' case.yaml files."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    if len(raw) > MAX_YAML_BYTES:
        raise InputError(f"{path}: larger than {MAX_YAML_BYTES} bytes")
    try:
        return parse_yaml(raw, aliases)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}:{line} is not valid YAML ({_short(getattr(err, 'problem', err))})") from None


def parse_yaml(raw: bytes, aliases: bool = False) -> object:
    """The YAML document in raw bytes (yaml.YAMLError where it is none); aliases only for the project's own files."""
    return yaml.load(raw.decode("utf-8", "replace"), Loader=yaml.SafeLoader if aliases else _NoAliasLoader)
