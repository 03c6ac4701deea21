"""The Kueue Configuration generated from definitions (karta.kueue.config): every suspendable
definition's root kind is an external framework, Kueue's built-ins stay on only for kinds karta
does not manage (any version), and nothing violates the validation Kueue v0.17.0 applies
(``Kind.version.group`` only, no GVK named twice)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from karta.catalog import catalog_definitions
from karta.kueue.config import (
    BUILTIN_FRAMEWORKS,
    CONFIG_API_VERSION,
    KueueConfigError,
    kueue_configuration,
    kueue_integrations,
    suspendable,
)
from karta.model import Karta, karta_from_dict

DEFAULT_BUILTINS = [f.name for f in BUILTIN_FRAMEWORKS if f.default]


def definition(gvk: tuple[str, str, str], *, suspend: bool = True, resume: bool = True) -> Karta:
    group, version, kind = gvk
    root: dict[str, Any] = {
        "name": "root",
        "kind": {"group": group, "version": version, "kind": kind},
        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
        "statusDefinition": {"statusMappings": {"running": [{"byPhase": "Running"}]}},
    }
    if suspend or resume:
        root["suspendDefinition"] = {
            "suspendActions": [{"path": ".spec.suspend", "value": "true"}] if suspend else [],
            "resumeActions": [{"path": ".spec.suspend", "value": "false"}] if resume else [],
        }
    body = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": f"{kind.lower()}-{version}"},
        "spec": {"structureDefinition": {"rootComponent": root}},
    }
    return karta_from_dict(copy.deepcopy(body))


THING = ("example.com", "v1", "Thing")
PYTORCH = ("kubeflow.org", "v1", "PyTorchJob")


def test_a_suspendable_kind_is_external_and_every_default_builtin_stays() -> None:
    got = kueue_integrations([definition(THING)])
    assert got.external_frameworks == ("Thing.v1.example.com",)
    assert list(got.frameworks) == DEFAULT_BUILTINS
    assert got.left_out == ()


def test_a_kind_karta_manages_turns_its_builtin_off_at_any_version() -> None:
    got = kueue_integrations([definition(PYTORCH), definition(("kubeflow.org", "v1", "MPIJob"))])
    assert got.external_frameworks == ("MPIJob.v1.kubeflow.org", "PyTorchJob.v1.kubeflow.org")
    # Kueue's mpijob built-in is MPIJob v2beta1: karta's v1 MPIJob is the same resource.
    assert "kubeflow.org/pytorchjob" not in got.frameworks
    assert "kubeflow.org/mpijob" not in got.frameworks
    assert "kubeflow.org/tfjob" in got.frameworks


def test_definitions_without_both_actions_are_left_out_with_the_reason() -> None:
    got = kueue_integrations(
        [
            definition(THING, suspend=False, resume=False),
            definition(("example.com", "v1", "Half"), resume=False),
        ]
    )
    assert got.external_frameworks == ()
    assert got.left_out == (
        ("Half.v1.example.com", "no suspend and resume actions on the root component"),
        ("Thing.v1.example.com", "no suspend and resume actions on the root component"),
    )
    assert not suspendable(definition(("example.com", "v1", "Half"), resume=False))
    assert suspendable(definition(THING))


def test_a_core_group_kind_cannot_be_external() -> None:
    got = kueue_integrations([definition(("", "v1", "Pod"))])
    assert got.external_frameworks == ()
    assert got.left_out[0][0] == "Pod.v1"
    assert "core-group" in got.left_out[0][1]
    assert "pod" in got.frameworks  # Kueue keeps its own Pod integration


def test_native_keeps_a_builtin_and_leaves_the_kind_out() -> None:
    got = kueue_integrations([definition(("batch", "v1", "Job")), definition(THING)], native=["batch/job"])
    assert got.external_frameworks == ("Thing.v1.example.com",)
    assert "batch/job" in got.frameworks
    assert got.left_out == (("Job.v1.batch", "kept with Kueue's built-in framework batch/job"),)


def test_an_unknown_native_name_is_one_clear_error() -> None:
    with pytest.raises(
        KueueConfigError, match=r"unknown Kueue v0\.17\.0 framework batch/jobs \(known: batch/job, "
    ):
        kueue_integrations([], native=["batch/jobs"])


def test_duplicates_are_listed_once_and_a_suspendable_one_wins() -> None:
    got = kueue_integrations(
        [definition(THING, suspend=False, resume=False), definition(THING), definition(THING)]
    )
    assert got.external_frameworks == ("Thing.v1.example.com",)
    assert got.left_out == ()


def test_the_catalog_passes_kueues_validation_rules() -> None:
    """What pkg/config/validation.go validateIntegrations checks: every external framework parses as
    Kind.version.group (schema.ParseKindArg: at least two dots), and no GVK is named twice among
    enabled built-ins and external frameworks."""
    got = kueue_integrations(catalog_definitions())
    builtin_gvks = {f.gvk for f in BUILTIN_FRAMEWORKS if f.name in got.frameworks}
    seen: set[tuple[str, str, str]] = set()
    for token in got.external_frameworks:
        kind, version, group = token.split(".", 2)
        assert kind and version and group, token
        assert (group, version, kind) not in seen
        seen.add((group, version, kind))
    assert not seen & {tuple(g) for g in builtin_gvks}
    # No built-in runs on a kind karta manages, at whatever version.
    managed = {(g, k) for g, _, k in seen}
    assert not [
        f.name for f in BUILTIN_FRAMEWORKS if f.name in got.frameworks and f.gvk.group_kind in managed
    ]
    assert "PyTorchJob.v1.kubeflow.org" in got.external_frameworks
    assert "ray.io/rayservice" in got.frameworks  # the catalog's RayService has no suspend actions


def test_the_configuration_document() -> None:
    config = kueue_configuration([definition(THING)], namespace="queues")
    assert config["apiVersion"] == CONFIG_API_VERSION == "config.kueue.x-k8s.io/v1beta2"
    assert config["kind"] == "Configuration"
    assert config["namespace"] == "queues"
    assert config["manageJobsWithoutQueueName"] is False
    assert config["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"] == [
        "kube-system",
        "queues",
    ]
    assert config["integrations"] == {
        "frameworks": DEFAULT_BUILTINS,
        "externalFrameworks": ["Thing.v1.example.com"],
    }
    assert "externalFrameworks" not in kueue_configuration([])["integrations"]


def test_the_module_prints_the_catalogs_configuration() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "karta.kueue.config", "--native", "batch/job"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == kueue_configuration(catalog_definitions(), native=["batch/job"])
    bad = subprocess.run(
        [sys.executable, "-m", "karta.kueue.config", "--native", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("karta.kueue.config: unknown Kueue v0.17.0 framework nope")
    assert "Traceback" not in bad.stderr


def test_a_suspendable_kind_karta_cannot_start_stays_with_kueue() -> None:
    """TrainJob's pod template is its runtime's (extension E3: a referenced object karta never
    writes), AppWrapper has no pod-bearing component: karta's adapter would not manage them, so
    Kueue's built-ins keep them."""
    from karta.catalog import catalog_definition

    trainjob = catalog_definition("trainer-kubeflow-org-trainjob-v1alpha1")
    appwrapper = catalog_definition("workload-codeflare-dev-appwrapper-v1beta2")
    assert trainjob is not None and appwrapper is not None
    got = kueue_integrations([trainjob, appwrapper, definition(THING)])
    assert got.external_frameworks == ("Thing.v1.example.com",)
    assert "trainer.kubeflow.org/trainjob" in got.frameworks
    assert "workload.codeflare.dev/appwrapper" in got.frameworks
    assert [token for token, _ in got.left_out] == [
        "AppWrapper.v1beta2.workload.codeflare.dev",
        "TrainJob.v1alpha1.trainer.kubeflow.org",
    ]
    assert "reads a referenced object" in got.left_out[1][1]
