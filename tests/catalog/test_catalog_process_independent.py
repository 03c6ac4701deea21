"""The built-in catalog (src/karta/catalog/data/*.yaml) depends on nothing of the evaluating process
and uses nothing gojq lacks: no builtin the builtin table marks ``process`` or ``environment``, no
``env``/``$ENV``/``$__loc__``, nothing gojq does not define (so the original and KAI Scheduler
can evaluate every definition), and every expression compiles."""

from __future__ import annotations

from pathlib import Path

import yaml

import karta.catalog as catalog
from karta.jq import syntax as A
from karta.jq.bound import bound_names, rewrite
from karta.jq.builtin_table import BUILTINS, FORMATS, PREDEFINED_VARIABLES
from karta.jq.parser import parse
from karta.jq.safety import _walk
from karta.jq.scope_check import compile_check
from karta.model.validate_expressions import jq_fields

DATA = Path(catalog.__file__).resolve().parent / "data"


def _problems(node: A.Node) -> list[str]:
    out = []
    for n in _walk(node):
        if isinstance(n, A.Call):
            builtin = BUILTINS.get(n.name)
            if builtin is None:
                continue
            if builtin.effect in ("process", "environment"):
                out.append(f"{n.name} ({builtin.effect})")
            if builtin.lacks_in_gojq(len(n.args)) or len(n.args) in builtin.gojq_since:
                out.append(f"{n.name}/{len(n.args)} (gojq)")
        elif isinstance(n, A.Var) and n.name in PREDEFINED_VARIABLES:
            out.append(f"${n.name}")
        elif isinstance(n, A.Format) and n.name not in FORMATS:
            out.append(f"@{n.name}")
        elif isinstance(n, A.StringInterp) and n.fmt is not None and n.fmt not in FORMATS:
            out.append(f"@{n.fmt}")
    detail = compile_check(node)
    if detail is not None:
        out.append(detail)
    return out


def test_the_catalog_files_are_the_catalog() -> None:
    files = sorted(p.stem for p in DATA.glob("*.yaml"))
    assert files == sorted(catalog.catalog_slugs())
    for path in DATA.glob("*.yaml"):
        assert yaml.safe_load(path.read_text())["metadata"]["name"] == path.stem


def test_no_catalog_expression_depends_on_the_process_or_needs_what_gojq_lacks() -> None:
    found = {}
    count = 0
    for slug, karta in zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True):
        # Extension E3: an expression reading a reference compiles as the engines run it, bound.
        names = frozenset(r.name for r in karta.spec.structure_definition.references)
        for field in jq_fields(karta):
            count += 1
            expression = rewrite(field.expression, bound_names(field.expression, names))
            problems = _problems(parse(expression))
            if problems:
                found[f"{slug}: {field.location}: {field.expression}"] = problems
    assert count > 400
    assert found == {}


def test_the_check_sees_what_it_looks_for() -> None:
    assert _problems(parse("now")) == ["now (process)"]
    assert _problems(parse("env.X, $ENV.Y")) == ["env (environment)", "$ENV"]
    assert _problems(parse("keys_unsorted")) == ["keys_unsorted/0 (gojq)"]
    assert _problems(parse("$__loc__")) == ["$__loc__"]
    assert _problems(parse('@base32 "\\(.)"')) == ["@base32"]
    assert _problems(parse("nope")) == ["nope/0 is not defined"]
