"""The chart without a cluster: ``helm lint``, ``helm template`` goldens for three value sets, the
rendered objects against the library that defines them (the controller's flags parsed by its own
parser, its webhook configurations, its RBAC, the CRD), and values the schema refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definitions
from karta.controller.parts.certs import serving_hosts
from karta.controller.rbac import controller_rbac
from karta.controller.registration import webhook_configurations
from karta.crd import load_crd

from .helm_support import (
    CHART,
    GOLDEN,
    UPDATE_GOLDEN,
    VALUE_SETS,
    Helm,
    by_kind,
    controller_options,
    one,
)

NAMESPACE = "karta-system"


def _values(name: str) -> dict[str, Any]:
    merged: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
    args = VALUE_SETS[name]
    if args:
        override = yaml.safe_load(Path(args[1]).read_text())

        def merge(base: dict[str, Any], extra: dict[str, Any]) -> None:
            for key, value in extra.items():
                if isinstance(value, dict) and isinstance(base.get(key), dict):
                    merge(base[key], value)
                else:
                    base[key] = value

        merge(merged, override)
    return merged


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_lint_is_clean(helm: Helm, name: str) -> None:
    result = helm.run("lint", "--strict", str(CHART), *VALUE_SETS[name])
    assert "1 chart(s) linted, 0 chart(s) failed" in result.out
    assert "[WARNING]" not in result.out and "[ERROR]" not in result.out


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_template_golden(helm: Helm, name: str) -> None:
    """The rendered manifests but the CRD (compared with the packaged one below), as reviewed."""
    out = helm.run("template", "karta", str(CHART), "--namespace", NAMESPACE, *VALUE_SETS[name]).out
    chunks = [c for c in out.split("\n---\n") if "# Source: karta/templates/crd.yaml" not in c]
    text = "\n---\n".join(chunks).strip() + "\n"
    path = GOLDEN / f"{name}.yaml"
    if UPDATE_GOLDEN:
        path.write_text(text)
    assert path.read_text() == text, (
        f"{path.name} differs (KARTA_UPDATE_GOLDEN=1 rewrites it; review the diff)"
    )


def _canonical(rules: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps({k: sorted(v) for k, v in rule.items()}, sort_keys=True) for rule in rules)


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_rendered_objects_are_what_the_library_defines(helm: Helm, name: str) -> None:
    objects = helm.template(*VALUE_SETS[name], namespace=NAMESPACE)
    values = _values(name)
    options = controller_options(objects)  # the controller's own parser accepts every argument
    assert options.backend == values["backend"]
    assert options.namespaces == tuple(values["watchNamespaces"])
    assert options.leader_elect == values["leaderElection"]["enabled"]
    assert options.install_catalog == values["definitions"]["installCatalog"]

    # Webhook configurations: those the controller would register for the same flags.
    mutating = by_kind(objects, "MutatingWebhookConfiguration")
    validating = by_kind(objects, "ValidatingWebhookConfiguration")
    expected = webhook_configurations(options, namespace=NAMESPACE)
    for rendered, want in zip((*mutating, *validating), expected, strict=True):
        assert rendered["metadata"]["name"] == want["metadata"]["name"]
        assert rendered["webhooks"] == want["webhooks"]
        inject = (rendered["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")
        if values["webhook"]["certificates"] == "cert-manager":
            certificate = one(objects, "Certificate")
            assert inject == f"{NAMESPACE}/{certificate['metadata']['name']}"
        else:
            assert inject is None

    # RBAC: exactly the rules the controller needs for these options.
    rbac = controller_rbac(options, catalog_definitions(), extra_rules=values["rbac"]["extraRules"])
    assert _canonical(one(objects, "ClusterRole")["rules"]) == _canonical(rbac.cluster_rules)
    roles = by_kind(objects, "Role")
    assert _canonical(roles[0]["rules"] if roles else []) == _canonical(rbac.namespace_rules)
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    account = pod["serviceAccountName"]
    assert [a["metadata"]["name"] for a in by_kind(objects, "ServiceAccount")] == (
        [account] if values["serviceAccount"]["create"] else []
    )
    for binding in (*by_kind(objects, "ClusterRoleBinding"), *by_kind(objects, "RoleBinding")):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
    if roles:
        names = {n for r in rbac.namespace_rules for n in r.get("resourceNames", [])}
        assert names <= {options.webhook_cert_secret, options.leader_election_id}

    # The webhook Service reaches the container's webhook port; the certificate names it.
    (container,) = pod["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    service = next(
        s for s in by_kind(objects, "Service") if s["metadata"]["name"] == options.webhook_service_name
    )
    assert service["spec"]["ports"] == [
        {"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    ]
    assert ports["webhook"] == options.webhook_port
    assert ports["healthz"] == int(options.health_probe_bind_address.rpartition(":")[2])
    assert options.ui == values["ui"]["enabled"]
    if options.ui:
        assert ports["ui"] == values["ui"]["port"] == int(options.ui_bind_address.rpartition(":")[2])
    else:
        assert "ui" not in ports
    if values["webhook"]["certificates"] == "cert-manager":
        certificate = one(objects, "Certificate")
        assert set(certificate["spec"]["dnsNames"]) == set(
            serving_hosts(options.webhook_service_name, NAMESPACE, None)
        )
        assert certificate["spec"]["secretName"] == options.webhook_cert_secret
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert mounts["serving-certs"]["mountPath"] == str(options.webhook_cert_dir)
        volume = next(v for v in pod["volumes"] if v["name"] == "serving-certs")
        assert volume["secret"]["secretName"] == options.webhook_cert_secret
        assert options.webhook_cert_mode == "manual"
    else:
        assert options.webhook_cert_mode == "auto"
        assert not by_kind(objects, "Certificate") and not by_kind(objects, "Issuer")


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_the_pod_is_locked_down(helm: Helm, name: str) -> None:
    pod = one(helm.template(*VALUE_SETS[name], namespace=NAMESPACE), "Deployment")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in container["env"]


def test_the_crd_is_the_packaged_one_kept_on_uninstall(helm: Helm) -> None:
    crd = one(helm.template(namespace=NAMESPACE), "CustomResourceDefinition")
    meta = crd.pop("metadata")
    assert meta["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    packaged = load_crd()
    assert meta["name"] == packaged.pop("metadata")["name"]
    assert crd == packaged
    not_kept = one(helm.template("--set", "crds.keep=false", namespace=NAMESPACE), "CustomResourceDefinition")
    assert "annotations" not in not_kept["metadata"]
    assert not by_kind(
        helm.template("--set", "crds.install=false", namespace=NAMESPACE), "CustomResourceDefinition"
    )


def test_optional_objects_follow_their_values(helm: Helm) -> None:
    default = helm.template(namespace=NAMESPACE)
    assert one(default, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    assert not by_kind(default, "ServiceMonitor")
    monitored = helm.template(*VALUE_SETS["mode-b-cert-manager"], namespace=NAMESPACE)
    monitor = one(monitored, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s"}]
    single = helm.template(*VALUE_SETS["kai-single"], namespace=NAMESPACE)
    assert not by_kind(single, "PodDisruptionBudget")
    assert not by_kind(single, "ServiceMonitor")
    assert [s["metadata"]["name"] for s in by_kind(single, "Service")] == ["gangs-webhook"]
    off = helm.template("--set", "webhook.enabled=false", namespace=NAMESPACE)
    assert not by_kind(off, "MutatingWebhookConfiguration") and not by_kind(
        off, "ValidatingWebhookConfiguration"
    )
    assert [s["metadata"]["name"] for s in by_kind(off, "Service")] == ["karta-metrics"]
    assert not controller_options(off).enable_webhook
    no_rbac = helm.template("--set", "rbac.create=false", namespace=NAMESPACE)
    assert not [
        o for o in no_rbac if o["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    ]


def test_replicas_spread_over_nodes_unless_told_otherwise(helm: Helm) -> None:
    """Two replicas (the default) of a fail-closed webhook on one Node would go down together:
    spread by hostname, softly (a one-Node cluster still runs both); one replica, or ``[]``, none;
    a list of the user's own replaces the default."""

    def spread(*args: str) -> Any:
        return one(helm.template(*args, namespace=NAMESPACE), "Deployment")["spec"]["template"]["spec"].get(
            "topologySpreadConstraints"
        )

    (default,) = spread()
    assert default["topologyKey"] == "kubernetes.io/hostname"
    assert default["whenUnsatisfiable"] == "ScheduleAnyway" and default["maxSkew"] == 1
    pod_labels = one(helm.template(namespace=NAMESPACE), "Deployment")["spec"]["selector"]["matchLabels"]
    assert default["labelSelector"]["matchLabels"] == pod_labels
    assert spread("--set", "replicaCount=1") is None
    assert spread("--set-json", "topologySpreadConstraints=[]") is None
    own = {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    assert spread("--set-json", f"topologySpreadConstraints=[{json.dumps(own)}]") == [own]


def test_the_release_name_names_every_object(helm: Helm) -> None:
    objects = helm.template(release="ml", namespace="gangs")
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("Deployment", "ml-karta") in names and ("Service", "ml-karta-webhook") in names
    options = controller_options(objects)
    assert options.leader_election_id == "ml-karta-leader"
    assert options.webhook_namespace == options.leader_election_namespace == "gangs"
    assert options.mutating_webhook_name == "ml-karta-mutating"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "backend=slurm"), "at '/backend': value must be one of 'none', 'kai', 'workload-api'"),
        (
            ("--set", "backend=volcano", "--set", "webhook.enabled=false"),
            "at '/webhook/enabled': value must be true",
        ),
        (("--set", "replicas=3"), "additional properties 'replicas' not allowed"),
        (("--set", "replicaCount=0"), "at '/replicaCount': minimum: got 0, want 1"),
        (
            ("--set", "webhook.certificates=vault"),
            "at '/webhook/certificates': value must be one of 'auto', 'cert-manager'",
        ),
        (("--set", "watchNamespaces[0]=Team_A"), "at '/watchNamespaces/0'"),
        (("--set", "logLevel=trace"), "at '/logLevel'"),
        (("--set", "extraArgs[0]=verbose"), "at '/extraArgs/0'"),
        (
            ("--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true"),
            "at '/metrics/enabled'",
        ),
        (("--set", "leaderElection.retryPeriod=9"), "leaseDuration (15) must exceed renewDeadline (10)"),
    ],
)
def test_a_wrong_value_fails_with_its_name(helm: Helm, args: tuple[str, ...], message: str) -> None:
    result = helm.run("template", "karta", str(CHART), *args, check=False)
    assert result.code == 1, result.out
    assert message in result.err, result.err
