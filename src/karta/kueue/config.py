"""Kueue's ``Configuration`` generated from Karta definitions.

Owns: the table of Kueue's built-in job frameworks (its ``jobframework`` integrations at the
pinned version, ``KUEUE_VERSION``: their names and the kind each one manages), which definitions
karta can queue through Kueue (a root kind in an API group, suspend and resume actions on the root
component, and the rest of :func:`karta.kueue.eligibility.eligibility`: a pod-bearing component,
each able to receive a node selector), and the ``integrations`` section that follows:

- ``externalFrameworks``: ``Kind.version.group`` of every such definition. Kueue then treats
  ``Workload`` objects owned by objects of these kinds as managed by an external controller
  (karta's), and walks up to them from the Jobs and Pods they own;
- ``frameworks``: Kueue's default built-ins, except those whose kind (group and kind, any version)
  karta manages: two controllers must never suspend and resume the same object. Kueue rejects a
  configuration naming one GVK twice, and with the built-in at another version than karta's the
  built-in would still act on the same objects (one resource, several versions).

``native`` keeps chosen built-ins with Kueue even where a definition covers the kind (the test
cluster keeps ``batch/job`` native, to compare karta's path with Kueue's own). The rest of the
Configuration (ports, certificates, leader election) belongs to whoever runs Kueue
(``hack/cluster/controlplane.py`` in the tests): :func:`kueue_configuration` gives only what
depends on the definitions, plus the namespace and the managed-namespaces selector.

``python -m karta.kueue.config [--native batch/job ...]`` prints the Configuration of the built-in
catalog as JSON (how ``hack/cluster/up.sh --kueue`` gets it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from karta.errors import KartaError
from karta.kueue.eligibility import eligibility
from karta.model.gvk import GVK, GroupKind

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = [
    "BUILTIN_FRAMEWORKS",
    "CONFIG_API_VERSION",
    "KUEUE_VERSION",
    "BuiltinFramework",
    "KueueConfigError",
    "KueueIntegrations",
    "kueue_configuration",
    "kueue_integrations",
    "suspendable",
]

KUEUE_VERSION = "v0.17.0"
# The Configuration version v0.17.0 reads natively (v1beta1 is still decoded and converted).
CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
DEFAULT_NAMESPACE = "kueue-system"


class BuiltinFramework(NamedTuple):
    """One of Kueue's ``jobframework`` integrations: its name in ``integrations.frameworks``, the
    kind it manages (``JobType`` in its ``RegisterIntegration``), and whether Kueue's own default
    configuration enables it (``config/components/manager/controller_manager_config.yaml``)."""

    name: str
    gvk: GVK
    default: bool = True


# sigs.k8s.io/kueue v0.17.0, pkg/controller/jobs/*: FrameworkName and JobType of each integration.
# SparkApplication is alpha there (feature gate SparkApplicationIntegration, off by default):
# listed, never enabled by default. deployment, statefulset and leaderworkerset implicitly enable
# pod (their pods are what Kueue gates); Pod, in the core group, can never be an external framework.
BUILTIN_FRAMEWORKS: tuple[BuiltinFramework, ...] = (
    BuiltinFramework("batch/job", GVK("batch", "v1", "Job")),
    BuiltinFramework("kubeflow.org/mpijob", GVK("kubeflow.org", "v2beta1", "MPIJob")),
    BuiltinFramework("ray.io/rayjob", GVK("ray.io", "v1", "RayJob")),
    BuiltinFramework("ray.io/raycluster", GVK("ray.io", "v1", "RayCluster")),
    BuiltinFramework("ray.io/rayservice", GVK("ray.io", "v1", "RayService")),
    BuiltinFramework("jobset.x-k8s.io/jobset", GVK("jobset.x-k8s.io", "v1alpha2", "JobSet")),
    BuiltinFramework("kubeflow.org/paddlejob", GVK("kubeflow.org", "v1", "PaddleJob")),
    BuiltinFramework("kubeflow.org/pytorchjob", GVK("kubeflow.org", "v1", "PyTorchJob")),
    BuiltinFramework("kubeflow.org/tfjob", GVK("kubeflow.org", "v1", "TFJob")),
    BuiltinFramework("kubeflow.org/xgboostjob", GVK("kubeflow.org", "v1", "XGBoostJob")),
    BuiltinFramework("kubeflow.org/jaxjob", GVK("kubeflow.org", "v1", "JAXJob")),
    BuiltinFramework(
        "workload.codeflare.dev/appwrapper", GVK("workload.codeflare.dev", "v1beta2", "AppWrapper")
    ),
    BuiltinFramework("trainer.kubeflow.org/trainjob", GVK("trainer.kubeflow.org", "v1alpha1", "TrainJob")),
    BuiltinFramework(
        "sparkoperator.k8s.io/sparkapplication",
        GVK("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
        False,
    ),
    BuiltinFramework("pod", GVK("", "v1", "Pod")),
    BuiltinFramework("deployment", GVK("apps", "v1", "Deployment")),
    BuiltinFramework("statefulset", GVK("apps", "v1", "StatefulSet")),
    BuiltinFramework(
        "leaderworkerset.x-k8s.io/leaderworkerset", GVK("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")
    ),
)
_BY_NAME = {framework.name: framework for framework in BUILTIN_FRAMEWORKS}


class KueueConfigError(KartaError):
    """The Configuration cannot be generated as asked (an unknown built-in framework name)."""


class KueueIntegrations(NamedTuple):
    """The generated ``integrations`` section, and why the other definitions are left out.

    ``external_frameworks``: ``Kind.version.group`` tokens, sorted; ``frameworks``: built-in
    names in Kueue's own order; ``left_out``: ``(Kind.version.group, reason)`` for every distinct
    root kind that Kueue will not queue through karta, sorted."""

    frameworks: tuple[str, ...]
    external_frameworks: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]


def suspendable(definition: Karta) -> bool:
    """The root component has suspend and resume actions (at least one of each): karta can hold
    the workload until Kueue admits it, and release it then."""
    suspend = definition.root.suspend_definition
    return suspend is not None and bool(suspend.suspend_actions) and bool(suspend.resume_actions)


def _root_gvk(definition: Karta) -> GVK | None:
    kind = definition.root_gvk
    if kind is None or not kind.kind or not kind.version:
        return None
    return GVK(kind.group, kind.version, kind.kind)


def kueue_integrations(definitions: Iterable[Karta], *, native: Iterable[str] = ()) -> KueueIntegrations:
    """The ``integrations`` of a Kueue that queues every suspendable definition's kind through
    karta (module docstring). ``native``: built-in framework names kept with Kueue even where a
    definition covers their kind (that kind is then left out of ``externalFrameworks``)."""
    kept = tuple(native)
    unknown = [name for name in kept if name not in _BY_NAME]
    if unknown:
        known = ", ".join(f.name for f in BUILTIN_FRAMEWORKS)
        raise KueueConfigError(
            f"unknown Kueue {KUEUE_VERSION} framework {', '.join(unknown)} (known: {known})"
        )
    native_kinds = {_BY_NAME[name].gvk.group_kind: name for name in kept}
    external: set[GVK] = set()
    left_out: dict[GVK, str] = {}
    for definition in definitions:
        gvk = _root_gvk(definition)
        if gvk is None:
            continue
        if not suspendable(definition):
            left_out.setdefault(gvk, "no suspend and resume actions on the root component")
        elif (reason := eligibility(definition).reason) is not None:
            left_out.setdefault(gvk, reason)  # karta could not start it: Kueue's built-in keeps it
        elif not gvk.group:
            left_out[gvk] = "a core-group kind cannot be a Kueue external framework (Kind.version.group)"
        elif gvk.group_kind in native_kinds:
            left_out[gvk] = f"kept with Kueue's built-in framework {native_kinds[gvk.group_kind]}"
        else:
            external.add(gvk)
            left_out.pop(gvk, None)  # a suspendable definition of the same kind wins
    managed: set[GroupKind] = {gvk.group_kind for gvk in external}
    frameworks = tuple(
        f.name
        for f in BUILTIN_FRAMEWORKS
        if (f.default or f.name in kept) and f.gvk.group_kind not in managed
    )
    return KueueIntegrations(
        frameworks=frameworks,
        external_frameworks=tuple(sorted(gvk.token for gvk in external)),
        left_out=tuple(
            sorted((gvk.token, reason) for gvk, reason in left_out.items() if gvk not in external)
        ),
    )


def kueue_configuration(
    definitions: Iterable[Karta], *, native: Iterable[str] = (), namespace: str = DEFAULT_NAMESPACE
) -> dict[str, Any]:
    """A Kueue ``Configuration`` (``CONFIG_API_VERSION``) with the generated ``integrations``
    (:func:`kueue_integrations`): only workloads labelled ``kueue.x-k8s.io/queue-name`` are
    queued, in every namespace but ``kube-system`` and Kueue's own. Whoever runs Kueue adds its
    ports, certificates and leader election."""
    integrations = kueue_integrations(definitions, native=native)
    section: dict[str, Any] = {"frameworks": list(integrations.frameworks)}
    if integrations.external_frameworks:
        section["externalFrameworks"] = list(integrations.external_frameworks)
    return {
        "apiVersion": CONFIG_API_VERSION,
        "kind": "Configuration",
        "namespace": namespace,
        "manageJobsWithoutQueueName": False,
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["kube-system", namespace],
                }
            ]
        },
        "integrations": section,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the Configuration of the built-in catalog as JSON (``--native`` repeatable)."""
    parser = argparse.ArgumentParser(prog="python -m karta.kueue.config", description=main.__doc__)
    parser.add_argument("--native", action="append", default=[], metavar="FRAMEWORK",
                        help="a Kueue built-in framework kept with Kueue (e.g. batch/job)")  # fmt: skip
    ns = parser.parse_args(argv)
    from karta.catalog import catalog_definitions

    try:
        config = kueue_configuration(catalog_definitions(), native=ns.native)
    except KueueConfigError as exc:
        print(f"karta.kueue.config: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(config, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
