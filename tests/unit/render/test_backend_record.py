"""The backend record owns every backend fact karta-controller uses (issue 21 item 3): the
controller's ``--backend`` choices, its chart's enum and ``kli gang --backend`` are derived from the
registry; the one options function gives the reconciler and the webhook the same options for the
same served resources; immutable fields, admission's pod patch and create-only kinds, and the
extra RBAC come from the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import click
import pytest
import yaml

from karta.chart import CHART_DIR, schema_text
from karta.cli.commands.gang import gang
from karta.controller import options as controller_options_module
from karta.controller.options import parser
from karta.controller.rbac import workload_rules
from karta.render import BACKENDS, KaiOptions, VolcanoOptions, WorkloadApiOptions
from karta.render.backends import CONTROLLER_BACKENDS, NO_BACKEND, controller_options, gang_backend


class Served(NamedTuple):
    group: str
    version: str
    kind: str


def _workloads(*versions: str) -> list[Served]:
    return [Served("scheduling.k8s.io", v, "Workload") for v in versions] + [Served("", "v1", "Pod")]


def test_the_controller_backends_are_the_registry_records_it_runs() -> None:
    assert (NO_BACKEND, *(n for n, b in BACKENDS.items() if b.controller)) == CONTROLLER_BACKENDS
    assert CONTROLLER_BACKENDS == ("none", "kai", "workload-api", "volcano", "coscheduling")
    assert not BACKENDS["kueue"].controller
    assert controller_options_module.BACKENDS == CONTROLLER_BACKENDS
    (action,) = [a for a in parser()._actions if a.dest == "backend"]
    assert tuple(action.choices or ()) == CONTROLLER_BACKENDS


def test_the_chart_enum_and_kli_gang_choices_are_derived() -> None:
    schema = json.loads((CHART_DIR / "values.schema.json").read_text())
    assert json.loads(schema_text(schema))["properties"]["backend"]["enum"] == list(CONTROLLER_BACKENDS)
    schema["properties"]["backend"]["enum"] = ["none"]
    assert json.loads(schema_text(schema))["properties"]["backend"]["enum"] == list(CONTROLLER_BACKENDS)
    (option,) = [p for p in gang.params if p.name == "backend"]
    assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == tuple(BACKENDS)


@pytest.mark.parametrize(
    ("served", "release", "api_version"),
    [
        (("v1alpha1", "v1alpha2", "v1beta1", "v1alpha3"), "1.37", None),
        (("v1alpha2",), "1.36", None),
        (("v1alpha1",), "1.35", None),
        (("v1alpha3",), "1.37", "v1alpha3"),  # a 1.37 server with its alpha API only
        ((), "1.37", None),
    ],
)
def test_the_workload_api_options_come_from_the_served_workload(
    served: tuple[str, ...], release: str, api_version: str | None
) -> None:
    options = controller_options("workload-api", _workloads(*served), scheduler_name="s")
    assert options == WorkloadApiOptions(k8s_version=release, api_version=api_version)
    backend = gang_backend("workload-api")
    version = api_version or {"1.35": "v1alpha1", "1.36": "v1alpha2", "1.37": "v1beta1"}[release]
    assert backend.renders_version(options, "PodGroup", version)
    assert not backend.renders_version(options, "PodGroup", "v0")
    assert backend.renders_version(options, "CompositePodGroup", "v1alpha3")


def test_fixed_options_and_the_scheduler_name() -> None:
    assert controller_options("kai") == KaiOptions(kai_managed=True)
    assert controller_options("kai", scheduler_name="k") == KaiOptions(kai_managed=True, scheduler_name="k")
    assert controller_options("volcano", _workloads("v1alpha2")) == VolcanoOptions()
    assert gang_backend("volcano").renders_version(VolcanoOptions(), "PodGroup", "anything")


def test_admission_patch_adds_the_records_annotations_and_the_scheduler() -> None:
    patch = {"metadata": {"annotations": {"pod-group-name": "g"}}}
    kai = BACKENDS["kai"].admission_patch(patch, scheduler_name="k")
    assert kai == {
        "metadata": {"annotations": {"pod-group-name": "g", "kai.scheduler/skip-podgrouper": "true"}},
        "spec": {"schedulerName": "k"},
    }
    assert patch == {"metadata": {"annotations": {"pod-group-name": "g"}}}  # copied, not changed
    assert BACKENDS["volcano"].admission_patch(patch) == patch
    assert BACKENDS["workload-api"].pod_group_fields == ("schedulingGroup", "workloadRef")
    assert BACKENDS["workload-api"].create_only == ("Workload",)


def test_immutable_fields_per_version() -> None:
    backend = BACKENDS["workload-api"]
    v1alpha2 = {r.path for r in backend.immutable_fields("scheduling.k8s.io/v1alpha2", "Workload")}
    v1beta1 = {r.path for r in backend.immutable_fields("scheduling.k8s.io/v1beta1", "Workload")}
    assert v1alpha2 - v1beta1 == set()
    assert [
        r for r in backend.immutable_fields("scheduling.k8s.io/v1beta1", "Workload") if not r.names_only
    ] == [r for r in backend.immutable if r.kind == "Workload" and r.version is None and not r.names_only]
    assert any(
        r.version == "v1alpha2" for r in backend.immutable_fields("scheduling.k8s.io/v1alpha2", "Workload")
    )
    assert all(not BACKENDS[name].immutable for name in ("kai", "volcano", "coscheduling", "kueue"))


@pytest.mark.parametrize("backend", CONTROLLER_BACKENDS[1:])
def test_the_verbs_on_workloads_are_the_records(backend: str) -> None:
    from karta.catalog import catalog_definitions

    rules, _ = workload_rules(catalog_definitions(), backend=backend)
    patched = [r for r in rules if r["verbs"] == list(BACKENDS[backend].workload_verbs)]
    assert bool(patched) == bool(BACKENDS[backend].workload_verbs) == (backend == "kai")


def test_the_1_37_objects_at_the_alpha_version() -> None:
    from render_fixtures import run, train_7_pods

    from karta.errors import GangError

    beta = run("workload-api", pods=train_7_pods())
    alpha = run("workload-api", pods=train_7_pods(), api_version="v1alpha3")
    assert {o["apiVersion"] for o in alpha.objects} == {"scheduling.k8s.io/v1alpha3"}
    assert [{**o, "apiVersion": ""} for o in alpha.objects] == [{**o, "apiVersion": ""} for o in beta.objects]
    assert alpha.pod_patches == beta.pod_patches
    with pytest.raises(GangError, match=r"only 1\.37.s may be written at v1alpha3"):
        run("workload-api", k8s_version="1.36", api_version="v1alpha3")


CRDS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "crds"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "workloads"
CRD_FILES = {
    "kai": "scheduling.run.ai_podgroups.yaml",
    "volcano": "scheduling.volcano.sh_podgroups.yaml",
    "coscheduling": "scheduling.x-k8s.io_podgroups.yaml",
}


@pytest.mark.parametrize("backend", CRD_FILES)
def test_crd_backends_declare_no_immutable_field_because_their_crds_have_none(backend: str) -> None:
    """The record's empty ``immutable`` is the CRD's: no CEL rule (``x-kubernetes-validations``)
    anywhere in the corpus CRD of the backend's group object (an API server enforces nothing
    else on a CRD; their webhooks: docs/controller/gang-reconciler.md)."""
    crd = yaml.safe_load((CRDS / CRD_FILES[backend]).read_text())
    assert crd["spec"]["group"] == BACKENDS[backend].api_group
    assert "x-kubernetes-validations" not in json.dumps(crd)
    assert BACKENDS[backend].immutable == ()


@pytest.mark.parametrize("backend", CONTROLLER_BACKENDS[1:])
def test_the_records_minimums_are_where_the_renderer_writes_them(backend: str) -> None:
    """A scale-down's objects lower every minimum the record names (``lowered_minimums`` reads the
    record's ``minimums``): the paths are the renderer's, so pod admission can keep them."""
    from karta.catalog import catalog_definitions
    from karta.controller.runtime.group_writer import lowered_minimums
    from karta.extract import ComponentFactory
    from karta.render import render

    (doc,) = yaml.safe_load_all((EXAMPLES / "pytorchjob-train-7.yaml").read_text())
    doc["metadata"]["uid"] = "0f3c2a4e-1b2d-4c5e-8f90-123456789abc"
    definition = next(d for d in catalog_definitions() if d.metadata.name == "kubeflow-org-pytorchjob-v1")

    def objects(workers: int) -> list[dict[str, Any]]:
        doc["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = workers
        options = controller_options(backend)
        return [dict(o) for o in render(backend, ComponentFactory(definition, doc), options=options).objects]

    big, small = objects(8), objects(4)
    lowered = {
        (o["kind"], path.split(" ")[0])
        for live, o in zip(big, small, strict=True)
        for path in lowered_minimums(live, o)
    }
    wanted = {(m.kind, ".".join(m.path)) for m in BACKENDS[backend].minimums if "*" not in m.path}
    assert wanted and wanted <= lowered
