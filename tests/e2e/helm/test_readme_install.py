"""The documentation's "Install with Helm" task (docs/tasks/helm.md), followed as written on the
test cluster.

The page's shell blocks are read by their ``<!-- helm-install-step: NAME -->``
markers, in order, and every command is run verbatim by bash, with the pinned ``helm``, kubectl,
``kli`` and the cluster's kubeconfig, from a directory that holds the checkout's ``charts``,
``hack`` and ``src`` (the section's relative paths). After each step the test checks what the
section says it does. A block added, removed, renamed or reordered on the page fails here until
this test follows it.

All but the image build and push run (they need root, the network and a registry; the test
cluster pulls no image): of that block, the ``export`` line runs, and the build and push
commands are checked against ``hack/image/build.sh`` and the chart's appVersion.

The walk-through starts the way a user who read the docs in order does: the Karta CRD already
applied with kubectl ("The Karta CRD in a cluster", docs/getting-started/test-cluster.md), so the
install must adopt it. After the uninstall and the purge (no CRD left), the install step runs
again and must create it.

The cluster is the one with kube-controller-manager and kube-scheduler (``controllers_cluster``),
as ``hack/cluster/up.sh --controllers`` starts it: the Deployment gets its pods, which stay
Pending (no kubelet), and a namespace deletion finishes. It uses the page's fixed names (release
``karta`` in ``karta-system``, namespace ``ml-team``), so it needs our own control plane.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.crd import load_crd

from ..controller.operator_support import karta_body
from ..kubehttp import KubeHTTP, wait
from .helm_support import CHART, REPO, Helm

PAGE = REPO / "docs" / "tasks" / "helm.md"  # the page of the task
CRD_PAGE = REPO / "docs" / "getting-started" / "test-cluster.md"
SECTION = "# Install with Helm"
# A step's block may carry a title the docs tests read (``title="needs a cluster"``).
MARKER = re.compile(r"<!-- helm-install-step: ([a-z-]+) -->\n```sh[^\n]*\n(.*?)```", re.S)
# The section's steps, in the page's order; each is checked below.
STEPS = ("image", "install", "wait", "check", "gangs", "unstick", "uninstall", "purge")
# "The Karta CRD in a cluster": how a user applies the CRD before reading about Helm.
CRD_COMMAND = "kubectl apply --server-side -f src/karta/crd/kartas.run.ai.yaml"

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD_NAME = "kartas.run.ai"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1"
RELEASE_NS = "karta-system"
OPTED_IN = "ml-team"
OTHER = "ml-elsewhere"
SCOPE_LABEL = "karta.run.ai/gang-scheduling"


def section(text: str, heading: str) -> str:
    """The page's text from ``heading`` to the next heading of the same or a higher level."""
    start = text.index(heading + "\n")
    level = heading.split()[0]
    rest = text[start + len(heading) :]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, re.M)]
    return heading + (rest[: ends[0]] if ends else rest)


def commands(block: str) -> list[str]:
    """The block's commands: one per line, backslash continuations joined."""
    joined = re.sub(r"\\\n\s*", "", block)
    return [line.strip() for line in joined.splitlines() if line.strip()]


def readme_steps() -> dict[str, list[str]]:
    text = section(PAGE.read_text(), SECTION)
    found = MARKER.findall(text)
    assert text.count("```sh") == len(found), "a shell block of the section has no helm-install-step marker"
    assert [name for name, _ in found] == list(STEPS), "the page's steps changed: follow them here"
    return {name: commands(block) for name, block in found}


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return " ".join((self.out + self.err).split())


@dataclass
class Shell:
    """bash with the section's tools, in a directory that looks like the checkout."""

    cwd: Path
    env: dict[str, str]

    def run(self, command: str, *, timeout: float = 180.0) -> Ran:
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    def ok(self, command: str) -> Ran:
        ran = self.run(command)
        assert ran.code == 0, f"{command}: exit {ran.code}\n{ran.err}\n{ran.out}"
        return ran

    def refused(self, command: str, *expected: str) -> Ran:
        ran = self.run(command)
        assert ran.code != 0, f"{command} was not refused:\n{ran.out}"
        for part in expected:
            assert part in ran.text, f"{command}: {part!r} not in\n{ran.err}"
        return ran


@pytest.fixture
def shell(helm_binary: Path, kubectl_binary: Path, controllers_cluster: KubeHTTP, tmp_path: Path) -> Shell:
    work = tmp_path / "checkout"
    work.mkdir()
    for name in ("charts", "hack", "src"):
        (work / name).symlink_to(REPO / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELM_", "KUBE", "KARTA_"))}
    for name in ("config", "cache", "data"):
        (tmp_path / "helm" / name).mkdir(parents=True)
        env[f"HELM_{name.upper()}_HOME"] = str(tmp_path / "helm" / name)
    tools = [str(helm_binary.parent), str(kubectl_binary.parent), str(Path(sys.executable).parent)]
    tools.append(env.get("PATH", ""))
    env.update(PATH=os.pathsep.join(tools), KUBECONFIG=str(controllers_cluster.kubeconfig))
    return Shell(work, env)


def _app_version() -> str:
    return str(yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"])


def _get(cluster: KubeHTTP, path: str) -> dict[str, Any] | None:
    got = cluster.get(path)
    if got.status == 404:
        return None
    return got.json()


def _crd(cluster: KubeHTTP) -> dict[str, Any] | None:
    crd = _get(cluster, f"{CRDS}/{CRD_NAME}")
    if crd is None:
        return None
    conditions = (crd.get("status") or {}).get("conditions") or []
    return crd if any(c["type"] == "Established" and c["status"] == "True" for c in conditions) else None


def _namespace(cluster: KubeHTTP, name: str) -> None:
    if cluster.get(f"/api/v1/namespaces/{name}").status == 404:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        created = cluster.post("/api/v1/namespaces", body)
        assert created.status == 201, created.body


def _pod_answer(cluster: KubeHTTP, namespace: str) -> tuple[int, str]:
    """A pod created in ``namespace`` (a dry run: the same admission, nothing stored)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "readme-"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    got = cluster.post(f"/api/v1/namespaces/{namespace}/pods", pod, params={"dryRun": "All"})
    message = got.body.get("message") if isinstance(got.body, dict) else None
    return got.status, str(message or got.body)


def _karta_answer(cluster: KubeHTTP) -> int:
    """A Karta created as a dry run: the Karta webhooks are called on dry runs."""
    body = karta_body("readme-probe", group="readme.example.com", version="v1", kind="Widget")
    return cluster.post("/apis/run.ai/v1alpha1/kartas", body, params={"dryRun": "All"}).status


def _refused_pod(cluster: KubeHTTP, namespace: str) -> str | None:
    """Why a pod of ``namespace`` is refused, or None while it is admitted."""
    status, body = _pod_answer(cluster, namespace)
    return body if status >= 400 else None


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector's matchLabels and matchExpressions against ``labels``."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _namespace_labels(cluster: KubeHTTP, name: str) -> dict[str, str]:
    return dict(cluster.get(f"/api/v1/namespaces/{name}").json()["metadata"].get("labels") or {})


@pytest.fixture
def readme_names(controllers_cluster: KubeHTTP, helm_binary: Path, tmp_path: Path) -> Iterator[None]:
    """The page's namespaces, and everything cleaned up afterwards (the webhooks first: they
    are fail-closed), the Karta CRD left as it was found."""
    had_crd = controllers_cluster.get(f"{CRDS}/{CRD_NAME}").status == 200
    for name in (OPTED_IN, OTHER):
        _namespace(controllers_cluster, name)
    yield
    helm = Helm(helm_binary, tmp_path / "cleanup-helm", kubeconfig=controllers_cluster.kubeconfig)
    helm.run("uninstall", "karta", "--namespace", RELEASE_NS, "--ignore-not-found", check=False)
    controllers_cluster.delete(f"{WEBHOOKS}/mutatingwebhookconfigurations/karta-mutating")
    controllers_cluster.delete(f"{WEBHOOKS}/validatingwebhookconfigurations/karta-validating")
    for name in (OPTED_IN, OTHER, RELEASE_NS):
        controllers_cluster.delete(f"/api/v1/namespaces/{name}")
    controllers_cluster.delete("/apis/run.ai/v1alpha1/kartas/batch-job-v1")
    if had_crd and controllers_cluster.get(f"{CRDS}/{CRD_NAME}").status == 404:
        controllers_cluster.ensure_crd(load_crd())


def test_the_readme_install_with_helm_works_as_written(
    shell: Shell, controllers_cluster: KubeHTTP, readme_names: None
) -> None:
    cluster = controllers_cluster
    steps = readme_steps()
    version = _app_version()

    # 1. The image: the export runs; the build and push match build.sh's names and output.
    exports = [c for c in steps["image"] if c.startswith("export ")]
    assert exports == ["export KARTA_IMAGE=registry.example.com/platform/karta"], steps["image"]
    image = shell.ok(exports[0] + ' && printf %s "$KARTA_IMAGE"').out
    shell.env["KARTA_IMAGE"] = image
    build, push = (c for c in steps["image"] if not c.startswith("export "))
    script = (REPO / "hack" / "image" / "build.sh").read_text()
    assert 'KARTA_IMAGE_NAME="$KARTA_IMAGE" bash hack/image/build.sh' in build
    assert "name=${KARTA_IMAGE_NAME:-ghcr.io/karta-dev/karta}" in script
    assert "tag=${KARTA_IMAGE_TAG:-$version}" in script  # the package version = appVersion
    assert "out=${KARTA_IMAGE_OUT:-$repo/dist/image}" in script and 'oci="$out/oci"' in script
    assert push == f'skopeo copy oci:dist/image/oci:{version} "docker://$KARTA_IMAGE:{version}"'
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["image"]["repository"] == "ghcr.io/karta-dev/karta" and values["image"]["tag"] == ""
    assert "placeholder" in section(PAGE.read_text(), SECTION).split("<!-- helm-install-step")[0]

    # The CRD applied with kubectl first, as "The Karta CRD in a cluster" shows: not Helm's.
    assert CRD_COMMAND in section(CRD_PAGE.read_text(), "## The Karta CRD in a cluster")
    shell.ok(CRD_COMMAND)
    crd = wait("the kubectl-applied CRD", lambda: _crd(cluster))
    assert "meta.helm.sh/release-name" not in (crd["metadata"].get("annotations") or {})

    # 3. Install: the CRD adopted; two replicas with leader election, the PDB, the image.
    (install,) = steps["install"]
    installed = shell.ok(install)
    _check_installed(cluster, image, version)
    notes = installed.text
    assert "is the chart's placeholder" not in notes  # the image was given
    (wait_command,) = steps["wait"]
    assert wait_command in notes, "NOTES.txt shows the page's wait command"
    assert "the webhooks are fail-closed" in notes and 'failed calling webhook "mkarta.run.ai"' in notes

    # 4. Wait: on the test cluster it only waits (no kubelet), at 0 of 2 ready.
    waiting = subprocess.Popen(
        ["bash", "-o", "pipefail", "-c", wait_command],
        cwd=shell.cwd,
        env=shell.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(15)
        assert waiting.poll() is None, "the rollout finished on a cluster without a kubelet"
    finally:
        waiting.terminate()
        out, _ = waiting.communicate(timeout=30)
    assert 'Waiting for deployment "karta" rollout to finish' in out, out
    assert "successfully rolled out" not in out

    # 4. Look: the objects; the Karta write refused while no replica answers.
    wait("the Karta webhooks refusing", lambda: _karta_answer(cluster) >= 400)
    look, mutating, validating, crd_get, export, apply = steps["check"]
    listed = shell.ok(look).out
    assert re.search(r"deployment\.apps/karta\s+0/2\s", listed), listed
    assert re.search(r"poddisruptionbudget\.policy/karta\s+N/A\s+1\s", listed), listed
    assert "service/karta-webhook" in listed and "service/karta-metrics" in listed
    assert "karta-mutating" in shell.ok(mutating).out
    assert "karta-validating" in shell.ok(validating).out
    assert CRD_NAME in shell.ok(crd_get).out
    shell.ok(export)
    shell.refused(apply, 'failed calling webhook "mkarta.run.ai"')
    assert cluster.get("/apis/run.ai/v1alpha1/kartas/batch-job-v1").status == 404

    # 5. Gang scheduling: the pod webhook, fail-closed for the opted-in namespace only.
    upgrade, label = steps["gangs"]
    upgraded = shell.ok(upgrade)
    assert "mode B: gang backend workload-api" in upgraded.text
    assert f"kubectl label namespace NAMESPACE {SCOPE_LABEL}=enabled" in upgraded.text
    assert label == f"kubectl label namespace {OPTED_IN} {SCOPE_LABEL}=enabled"
    shell.ok(label)
    config = cluster.get(f"{WEBHOOKS}/mutatingwebhookconfigurations/karta-mutating").json()
    pods_hook = {w["name"]: w for w in config["webhooks"]}["pods.karta.run.ai"]
    assert pods_hook["failurePolicy"] == "Fail"
    selector = pods_hook["namespaceSelector"]
    assert _selects(selector, _namespace_labels(cluster, OPTED_IN))
    for never in (OTHER, RELEASE_NS, "kube-system"):
        assert not _selects(selector, _namespace_labels(cluster, never)), never
    refused = wait("a pod of ml-team refused", lambda: _refused_pod(cluster, OPTED_IN))
    assert 'failed calling webhook "pods.karta.run.ai"' in refused, refused
    assert _pod_answer(cluster, OTHER)[0] == 201

    # 6. No replica ready: the pods say why (Pending here: no kubelet); the label taken off
    #    lets the namespace's pods be created again.
    get_pods, unlabel = steps["unstick"]
    pods = wait(
        "the controller's pods listed",
        lambda: [ln for ln in shell.ok(get_pods).out.splitlines()[1:] if ln.startswith("karta-")],
    )
    assert all(re.search(r"\s0/1\s+Pending\s", ln) for ln in pods), pods
    shell.ok(unlabel)
    assert SCOPE_LABEL not in _namespace_labels(cluster, OPTED_IN)
    wait("a pod of ml-team created again", lambda: _pod_answer(cluster, OPTED_IN)[0] == 201)

    # 7. Uninstall: everything of the chart goes but the CRD; Karta writes are accepted again.
    (uninstall,) = steps["uninstall"]
    removed = shell.ok(uninstall)
    assert "kept due to the resource policy" in removed.out and CRD_NAME in removed.out
    assert shell.ok("helm list --namespace karta-system -q").out.strip() == ""
    for path in (
        f"{WEBHOOKS}/mutatingwebhookconfigurations/karta-mutating",
        f"{WEBHOOKS}/validatingwebhookconfigurations/karta-validating",
        "/apis/apps/v1/namespaces/karta-system/deployments/karta",
        "/apis/policy/v1/namespaces/karta-system/poddisruptionbudgets/karta",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/karta",
    ):
        wait(f"{path} deleted", lambda path=path: cluster.get(path).status == 404)
    assert _crd(cluster) is not None
    assert cluster.get(f"/api/v1/namespaces/{RELEASE_NS}").status == 200  # the namespace stays
    # No replica ever ran here: the controller wrote no Secret and no Lease.
    assert cluster.get("/api/v1/namespaces/karta-system/secrets/karta-webhook-cert").status == 404
    lease = "/apis/coordination.k8s.io/v1/namespaces/karta-system/leases/karta-leader"
    assert cluster.get(lease).status == 404
    wait("Karta writes accepted", lambda: _karta_answer(cluster) == 201)
    assert "karta.run.ai/batch-job-v1 created" in shell.ok(apply).out

    # The rest removed: the namespace, then the CRD with every Karta.
    drop_namespace, drop_crd = steps["purge"]
    shell.ok(drop_namespace)
    assert cluster.get(f"/api/v1/namespaces/{RELEASE_NS}").status == 404
    shell.ok(drop_crd)
    wait("the CRD gone", lambda: cluster.get(f"{CRDS}/{CRD_NAME}").status == 404)

    # 3. again, on a cluster without the CRD: the chart creates it.
    shell.ok(install)
    _check_installed(cluster, image, version)
    assert cluster.get("/apis/run.ai/v1alpha1/kartas/batch-job-v1").status == 404  # went with the CRD
    shell.ok(uninstall)
    assert _crd(cluster) is not None


def _check_installed(cluster: KubeHTTP, image: str, version: str) -> None:
    """What step 3 says the install makes: the CRD Helm's (adopted or created) and kept, two
    replicas that lead by a Lease, the PodDisruptionBudget, both webhook configurations."""
    crd = wait("the CRD established", lambda: _crd(cluster))
    annotations = crd["metadata"]["annotations"]
    assert annotations["meta.helm.sh/release-name"] == "karta"
    assert annotations["meta.helm.sh/release-namespace"] == RELEASE_NS
    assert annotations["helm.sh/resource-policy"] == "keep"
    deployment = cluster.get("/apis/apps/v1/namespaces/karta-system/deployments/karta").json()
    assert deployment["spec"]["replicas"] == 2
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"{image}:{version}"
    assert "--leader-elect" in container["args"]
    pdb = cluster.get("/apis/policy/v1/namespaces/karta-system/poddisruptionbudgets/karta").json()
    assert pdb["spec"]["maxUnavailable"] == 1
    mutating = cluster.get(f"{WEBHOOKS}/mutatingwebhookconfigurations/karta-mutating").json()
    validating = cluster.get(f"{WEBHOOKS}/validatingwebhookconfigurations/karta-validating").json()
    assert {w["name"]: w["failurePolicy"] for w in validating["webhooks"]} == {"vkarta.run.ai": "Fail"}
    assert {w["name"]: w["failurePolicy"] for w in mutating["webhooks"]}["mkarta.run.ai"] == "Fail"
