"""Check every input file: cases (schema, unique ids, standalone scripts, oracles, links), matrix, claims, sweep.

Each problem is one line naming the file, the field and what is allowed; no case code is run and nothing a case
names is imported here. Besides the schema, the claim-judging rules of CONTRIBUTING.md that can be checked without a
run: every exception class an oracle or a script names exists in the installed torch (or builtins: asked in a
contained child process, contrib/exception_names.py); a measurement case has fixed.py or says why none applies; a claim
about specific hardware is gated to it; a claim about the article's fix has article_fix.py; one claim per variant.
The exception names are checked in contrib/exception_checks.py; a case script is read as untrusted and checked without
running it in contrib/script_checks.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.contrib.exception_checks import name_problems
from reprokit.contrib.oracle_checks import oracle_problems
from reprokit.contrib.oracle_history import recorded_message_problems
from reprokit.contrib.script_checks import NotAScript, compared_class_names, script_problems, script_text
from reprokit.model import corpus
from reprokit.model.case import Case, load_case
from reprokit.model.claims import Claims, load_claims
from reprokit.model.matrix import Matrix, load_matrix
from reprokit.model.schema import InputError
from reprokit.run import sweep

# Words that make a claim one about specific hardware (rule 4).
HARDWARE_WORDS = re.compile(r"\b(A10|A100|H100|H200|RTX ?4090|MI300X|910B|NVLink|PCIe|NUMA)\b")


def claim_problems(path: Path, claims: Claims, case_dirs: dict[str, Path], matrix: Matrix | None) -> list[str]:
    """The claim rules validate can check without a run (rules 2, 4 and 7 of CONTRIBUTING.md)."""
    problems: list[str] = []
    used: dict[tuple[str, str], str] = {}  # (case, variant) -> the claim that tests it
    for i, claim in enumerate(claims.claims):
        where = f"{path}: claims.{i} ({claim.id})"
        variant = "article_fix" if claim.article_fix else "repro"
        for case in claim.cases:
            if claim.article_fix and case in case_dirs and not (case_dirs[case] / "article_fix.py").exists():
                problems.append(f"{where}: article_fix: true, but cases/{case}/ has no article_fix.py")
            if (case, variant) in used:
                problems.append(
                    f"{where}: cases/{case} {variant} already decides claim {used[case, variant]!r}; "
                    "one variant per claim (split the case)"
                )
            used[case, variant] = claim.id
        named = HARDWARE_WORDS.findall(claim.claim)
        if (
            named
            and not claim.untestable
            and claim.hardware is None
            and not (claim.untested and HARDWARE_WORDS.search(claim.untested))
        ):
            problems.append(
                f"{where}: claim names hardware ({', '.join(sorted(set(named)))}); add hardware: "
                "{needs, targets} (or say in untested that the hardware part is not tested)"
            )
        if claim.hardware is not None and matrix is not None:
            for target in claim.hardware.targets:
                if target not in matrix.targets:
                    problems.append(f"{where}: hardware.targets: {target!r} is no target of matrix.yaml")
    return problems


def case_problems(yml: Path, case, named: list[tuple[str, str, bool]]) -> list[str]:
    """One case folder's problems; the exception names it uses are added to `named` ((where, name, named by an
    oracle)), checked later for every case at once (one contained run of the torch under test)."""
    if undecodable := corpus.not_text(yml.parent):  # nothing else of it is read: the site leaves it out too
        return undecodable
    problems = []
    if not (yml.parent / "repro.py").exists():
        problems.append(f"{yml.parent}: repro.py is missing")
    problems += [p for name in case_files.EXTRA_FILES if (p := case_files.problem(yml.parent, name))]
    for script in sorted(yml.parent.glob("*.py")):
        problems += script_problems(script)
        named += [
            (f"{script}:{line}: compares a class name with", name, False) for line, name in compared_class_names(script)
        ]
    named += [
        (str(yml), o.exception, True)
        for o in [case.expect.repro, *(e.repro for e in case.overrides.values())]
        if o.exception
    ]
    problems += oracle_problems(yml, case)
    article = case.article
    if article and article.stance == "measures" and not article.no_fix and not (yml.parent / "fixed.py").exists():
        problems.append(f"{yml}: article.stance: measures needs fixed.py or article.no_fix (why no fix applies)")
    return problems


def sweep_problems(sweep_dir: Path, ids: dict[str, Path]) -> list[str]:
    problems = []
    try:
        sweep.load_grid(sweep_dir / "grid.yaml")
    except InputError as err:
        problems.append(str(err))
    for model in sorted((sweep_dir / "models").glob("*.py")):
        try:
            tree = ast.parse(script_text(model))
        except (NotAScript, SyntaxError) as err:
            problems.append(str(err) if isinstance(err, NotAScript) else f"{model}:{err.lineno}: does not parse")
            continue
        if not any(isinstance(n, ast.FunctionDef) and n.name == "build" for n in tree.body):
            problems.append(f"{model}: defines no build() returning (model, example_inputs)")
        sweep_id = "sweep-" + model.stem.replace("_", "-")
        if sweep_id in ids:
            problems.append(f"{model}: its id {sweep_id!r} collides with {ids[sweep_id]}")
    return problems


def validate(root: Path, resolve_exceptions: bool = True) -> list[str]:
    problems: list[str] = []
    matrix = None
    try:
        matrix = load_matrix(root / "matrix.yaml")
    except InputError as err:
        problems.append(str(err))
    ids: dict[str, Path] = {}
    named: list[tuple[str, str, bool]] = []
    loaded_cases: dict[str, tuple[Path, Case]] = {}
    for yml in sorted((root / "cases").glob("*/case.yaml")):
        try:
            case = load_case(yml)
        except InputError as err:
            problems.append(str(err))
            continue
        if case.id in ids:
            problems.append(f"{yml}: id: {case.id!r} is also used by {ids[case.id]}")
        ids[case.id] = yml
        loaded_cases[case.id] = (yml, case)
        problems += case_problems(yml, case, named)
    if resolve_exceptions:
        cpu = matrix.targets.get("cpu") if matrix is not None else None
        problems += name_problems(named, root, cpu.pins.torch if cpu is not None else None)
    problems += recorded_message_problems(root, loaded_cases)  # every release's recorded message, per oracle
    if (root / "claims.yaml").exists():
        try:
            claims = load_claims(root / "claims.yaml", set(ids))
            problems += claim_problems(root / "claims.yaml", claims, {k: v.parent for k, v in ids.items()}, matrix)
        except InputError as err:
            problems.append(str(err))
    if (root / "sweep").is_dir():
        problems += sweep_problems(root / "sweep", ids)
    return problems
