"""The gang-backend registry is the only list of backends: the CLI choices are its names, every
record renders the running example, and its API group and resources cover exactly the objects its
renderer emits (so RBAC built from it grants what rendering needs). Options: one type per backend,
the documented defaults, one vocabulary."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields
from typing import Any

import click
import pytest
from render_fixtures import run, train_7_pods

import karta.render
from karta.cli.commands.gang import gang
from karta.cli.commands.rbac import rbac
from karta.render import (
    BACKENDS,
    CoschedulingOptions,
    KaiOptions,
    KueueOptions,
    VolcanoOptions,
    WorkloadApiOptions,
    options_for,
)
from karta.render.backends import OPTION_NAMES, gang_backend

# Option sets that between them make every backend emit every kind of object it can
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "kai": [{}, {"kai_managed": True}],
    "workload-api": [{"k8s_version": v} for v in ("1.35", "1.36", "1.37")] + [{"composite": True}],
    "volcano": [{}, {"min_resources": True}],
    "coscheduling": [{}, {"min_resources": True, "schedule_timeout_seconds": 30}],
    "kueue": [{}],
}


def _choices(command: click.Command, name: str) -> tuple[str, ...]:
    (option,) = [p for p in command.params if p.name == name]
    assert isinstance(option.type, click.Choice)
    return tuple(option.type.choices)


def test_cli_backend_choices_are_the_registry() -> None:
    assert _choices(gang, "backend") == tuple(BACKENDS)
    assert _choices(rbac, "backends") == tuple(sorted(BACKENDS))
    assert list(BACKENDS) == ["kai", "workload-api", "volcano", "coscheduling", "kueue"]
    assert set(VARIANTS) == set(BACKENDS)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_record_loads_its_renderer(name: str) -> None:
    backend = BACKENDS[name]
    assert backend.name == name
    assert gang_backend(name) is backend
    module, _, function = backend.renderer.partition(":")
    renderer = backend.load_renderer()
    assert callable(renderer) and renderer.__module__ == module and renderer.__name__ == function
    assert renderer is getattr(karta.render, function, renderer)  # the exported one, if exported


@pytest.mark.parametrize("name", list(BACKENDS))
def test_rbac_resources_are_exactly_what_the_renderer_emits(name: str) -> None:
    from karta.model.names import plural_guess

    backend = BACKENDS[name]
    emitted: set[str] = set()
    for options in VARIANTS[name]:
        for pods in ([], train_7_pods()):
            result = run(name, pods=pods, **options)
            assert result.objects, (name, options)
            for obj in result.objects:
                group, _, version = obj["apiVersion"].rpartition("/")
                assert group == backend.api_group and version, obj["apiVersion"]
                emitted.add(plural_guess(obj["kind"]))
    assert emitted == set(backend.resources)
    assert backend.rbac_rule() == {
        "apiGroups": [backend.api_group],
        "resources": list(backend.resources),
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    }


def test_each_backend_has_its_own_options_with_the_documented_defaults() -> None:
    assert {name: b.options_type for name, b in BACKENDS.items()} == {
        "kai": KaiOptions,
        "workload-api": WorkloadApiOptions,
        "volcano": VolcanoOptions,
        "coscheduling": CoschedulingOptions,
        "kueue": KueueOptions,
    }
    assert KaiOptions() == KaiOptions(
        scheduler_name=None,
        queue=None,
        kai_managed=False,
        kai_queue_label="kai.scheduler/queue",
        group_name=None,
    )
    assert WorkloadApiOptions() == WorkloadApiOptions(
        k8s_version="1.37", composite=False, topology_gate=True, topology_level_map={}, group_name=None
    )
    assert VolcanoOptions() == VolcanoOptions(
        scheduler_name=None, queue=None, min_resources=False, group_name=None
    )
    assert CoschedulingOptions() == CoschedulingOptions(
        scheduler_name=None, schedule_timeout_seconds=None, min_resources=False, group_name=None
    )
    assert [f.name for f in fields(KueueOptions)] == ["group_name", "queue"]
    assert KueueOptions().group_name is None


def test_options_for_takes_what_the_backend_reads_and_rejects_misspellings() -> None:
    flags = {
        "k8s_version": "1.35",
        "composite": True,
        "scheduler_name": "s",
        "queue": "q",
        "schedule_timeout_seconds": 5,
        "min_resources": True,
        "kai_managed": True,
        "group_name": "g",
    }
    assert options_for("kai", flags) == KaiOptions(
        scheduler_name="s", queue="q", kai_managed=True, group_name="g"
    )
    assert options_for("workload-api", flags) == WorkloadApiOptions(
        k8s_version="1.35", composite=True, group_name="g"
    )
    assert options_for("volcano", flags) == VolcanoOptions(
        scheduler_name="s", queue="q", min_resources=True, group_name="g"
    )
    assert options_for("coscheduling", flags) == CoschedulingOptions(
        scheduler_name="s", schedule_timeout_seconds=5, min_resources=True, group_name="g"
    )
    assert options_for("kueue", flags) == KueueOptions(group_name="g", queue="q")
    assert options_for("kai") == KaiOptions()
    assert set(flags) <= OPTION_NAMES
    with pytest.raises(TypeError, match="unknown render option"):
        options_for("volcano", {"min_resource": True})


def test_options_of_another_backend_are_refused() -> None:
    from render_fixtures import EVALUATOR, definition, train_7

    from karta.extract import ComponentFactory

    factory = ComponentFactory(definition(), train_7(), evaluator=EVALUATOR)
    with pytest.raises(TypeError, match="the kai backend takes KaiOptions, not VolcanoOptions"):
        karta.render.render("kai", factory, options=VolcanoOptions())


def test_the_registry_is_cheap_to_import() -> None:
    probe = "import json, sys, karta.render.backends; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert not loaded & {"karta.extract", "karta.gang", "karta.jq", "karta.model", "karta.render.kai", "yaml"}
