"""``kli get`` without a cluster: argument and flag errors (exit 2 before any connection), no
kubeconfig (exit 1 with a hint), and the pure parts: ages, phases, sorting, the table and Views."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli.cluster import cluster_failure, identity, overrides_from
from karta.cli.commands.get import parse_phases
from karta.cli.errors import CliError, UsageError
from karta.cli.lookup import not_found, not_installed, resolve_type
from karta.cli.progress import Progress
from karta.cli.views.age import human_age
from karta.cli.views.get import Table
from karta.definitions import DefinitionStore
from karta.errors import ApiError, ClusterUnreachableError, UnknownResourceTypeError
from karta.kube import ClusterConfig, ResourceType
from karta.model.gvk import version_key
from karta.report import Summarizer
from karta.report import has_phase as keep
from karta.report import sort_summaries as sort_views

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"
NOW = dt.datetime(2026, 1, 2, 12, 0, 0, tzinfo=dt.UTC)


# ------------------------------------------------------------------------------------- usage


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "get needs TYPE [NAME...], TYPE/NAME... or --all-types"),
        (("--all-types", "jobs"), "--all-types lists every covered type"),
        (("jobs/a", "b"), "mixed TYPE/NAME and bare words"),
        (("jobs", "a/b"), "mixed TYPE/NAME and bare words"),
        (("jobs/a/b",), "NAME may not contain '/'"),
        (("jobs/",), "missing NAME"),
        (("/a",), "missing TYPE"),
        (("jobs", "a", "-l", "x=y"), "a label selector (-l) cannot be combined with NAME"),
        (("jobs", "--chunk-size", "-1"), "--chunk-size must be 0 (no paging) or a positive number"),
        (("jobs", "a", "-A"), "across all namespaces"),
        (("jobs", "--watch-timeout", "5s"), "--watch-timeout needs -w/--watch"),
        (("jobs", "-w", "--watch-timeout", "soon"), "--watch-timeout: invalid request timeout"),
        (("jobs", "--phase", "Running,Sleeping"), "--phase: unknown phase 'Sleeping'"),
        (("jobs", "--request-timeout", "later"), "--request-timeout: invalid request timeout"),
        (("jobs", "-o", "xml"), "Invalid value for '-o'"),
    ],
)
def test_usage_errors(kli: Callable[..., Any], args: tuple[str, ...], message: str) -> None:
    result = kli("get", *args)
    assert result.code == 2, result.err
    assert result.out == ""
    assert result.err.startswith("error: ") and message in result.err


def test_no_kubeconfig(kli: Callable[..., Any]) -> None:
    result = kli("get", "jobs")
    assert result.code == 1
    assert result.err.startswith("error: no cluster configured: no kubeconfig found")
    assert "hint: point $KUBECONFIG or --kubeconfig at a kubeconfig" in result.err


def test_missing_explicit_kubeconfig(kli: Callable[..., Any], tmp_path: Path) -> None:
    result = kli("get", "jobs", "--kubeconfig", str(tmp_path / "nope"))
    assert result.code == 1
    assert "error: cannot use the cluster configuration: kubeconfig" in result.err
    assert "--kubeconfig" in result.err


def test_help_lists_the_connection_flags(kli: Callable[..., Any]) -> None:
    out = kli("get", "--help").out
    for flag in (
        "--kubeconfig",
        "--context",
        "--cluster",
        "--user",
        "-n, --namespace",
        "--server",
        "--token",
        "--as ",
        "--as-group",
        "--as-uid",
        "--insecure-skip-tls-verify",
        "--certificate-authority",
        "--client-certificate",
        "--client-key",
        "--tls-server-name",
        "--request-timeout",
        "--cache-dir",
        "--all-types",
        "--phase",
        "--selector",
        "--chunk-size",
        "--all-namespaces",
        "--watch",
    ):
        assert flag in out, flag


# ------------------------------------------------------------------------------------- live.py


def test_overrides_from_flags() -> None:
    ov = overrides_from(
        {
            "namespace": "ml",
            "as_user": "alice",
            "as_groups": ("a", "b"),
            "insecure_skip_tls_verify": False,
            "request_timeout": "1m",
            "cache_dir": "/tmp/x",
        }
    )
    assert (ov.namespace, ov.as_user, ov.as_groups, ov.request_timeout) == ("ml", "alice", ("a", "b"), "1m")
    assert ov.insecure_skip_tls_verify is None  # not given: the kubeconfig decides
    assert overrides_from({"insecure_skip_tls_verify": True}).insecure_skip_tls_verify is True
    with pytest.raises(UsageError):
        overrides_from({"request_timeout": "x"})


def test_identity() -> None:
    base = ClusterConfig(server="https://k", context="dev")
    assert identity(ClusterConfig(server="s", impersonate_user="alice", impersonate_groups=("ops",))) == (
        'user "alice" (groups "ops") (impersonated)'
    )
    assert (
        identity(ClusterConfig(server="s", token="t", context="dev")) == 'the bearer token of context "dev"'
    )
    assert identity(ClusterConfig(server="s", username="bob")) == 'user "bob"'
    assert identity(base) == "an anonymous user"


def test_cluster_failures_are_exit_1_with_hints() -> None:
    config = ClusterConfig(server="https://k:6443", context="dev", impersonate_user="alice")

    class Client:
        def __init__(self) -> None:
            self.config = config

    client: Any = Client()
    down = cluster_failure(ClusterUnreachableError("cannot reach https://k:6443: refused"), client=client)
    assert down.code == 1 and "context 'dev', server https://k:6443" in (down.hint or "")
    denied = cluster_failure(ApiError("jobs is forbidden", status=403), client=client, doing="listing jobs")
    assert str(denied) == (
        'listing jobs: user "alice" (impersonated) is not allowed to do this (403 Forbidden): '
        "jobs is forbidden"
    )
    rejected = cluster_failure(ApiError("Unauthorized", status=401), client=client)
    assert "rejected the credentials" in str(rejected)


def test_version_key_orders_by_stability() -> None:
    versions = ["v1alpha1", "v2beta1", "v1", "v1beta2", "v1beta1", "v2", "foo"]
    assert sorted(versions, key=version_key, reverse=True) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "foo",
    ]


class _Discovery:
    def __init__(self, served: list[ResourceType]) -> None:
        self.served = served

    def resolve(self, token: str) -> ResourceType:
        for r in self.served:
            if token.lower() in (r.plural, r.singular, r.kind.lower(), *r.short_names):
                return r
        raise UnknownResourceTypeError(f'the server doesn\'t have a resource type "{token}"')

    def find(self, group: str, version: str, kind: str) -> ResourceType | None:
        return next((r for r in self.served if r.gvk == (group, version, kind)), None)

    def candidates(self, token: str) -> list[ResourceType]:
        try:
            return [self.resolve(token)]
        except UnknownResourceTypeError:
            return []

    def resources(self) -> list[ResourceType]:
        return list(self.served)


class _Client:
    def __init__(self, served: list[ResourceType]) -> None:
        self.discovery = _Discovery(served)
        self.config = ClusterConfig(server="https://k")


JOBS = ResourceType("batch", "v1", "Job", "jobs", "job", verbs=("list",))


def test_resolve_type_through_discovery_and_definitions() -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    client: Any = _Client([JOBS])
    found = resolve_type("job", client=client, store=store)
    assert (found.definition.name, found.resource) == ("batch-job-v1", JOBS)
    absent = resolve_type("pytorchjobs", client=client, store=store)  # CRD not installed
    assert absent.resource is None and absent.kind == "PyTorchJob" and not absent.installed
    with pytest.raises(CliError) as none:
        resolve_type("widgets", client=client, store=store)
    assert none.value.code == 4 and "kli scaffold" in (none.value.hint or "")
    with pytest.raises(UsageError) as several:
        resolve_type("notebook", client=client, store=store)  # Notebook v1 and v1beta1, not served
    assert "notebook.v1.kubeflow.org" in str(several.value) and "notebook.v1beta1.kubeflow.org" in str(
        several.value
    )
    one = resolve_type("notebook.v1beta1.kubeflow.org", client=client, store=store)
    assert one.definition.name == "kubeflow-org-notebook-v1beta1"


@pytest.mark.parametrize(
    ("token", "suggestion"),
    [
        ("jbos", "did you mean jobs?"),  # a served, covered type
        ("pytorchjbs", "did you mean pytorchjobs?"),  # a covered type the cluster does not serve
        ("pytorchjob.kubeflow.rog", "did you mean pytorchjob.kubeflow.org?"),  # qualified alike
        ("configmps", "did you mean configmaps?"),  # served but not covered: still the likely intent
    ],
)
def test_a_mistyped_type_gets_did_you_mean(token: str, suggestion: str) -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    configmaps = ResourceType("", "v1", "ConfigMap", "configmaps", "configmap", short_names=("cm",))
    client: Any = _Client([JOBS, configmaps])
    with pytest.raises(CliError) as info:
        resolve_type(token, client=client, store=store)
    assert info.value.code == 4
    assert str(info.value).endswith(suggestion), str(info.value)


def test_no_suggestion_for_a_known_type_or_nothing_close() -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    configmaps = ResourceType("", "v1", "ConfigMap", "configmaps", "configmap")
    client: Any = _Client([configmaps])
    for token in ("configmaps", "zzzzzz"):
        with pytest.raises(CliError) as info:
            resolve_type(token, client=client, store=store)
        assert "did you mean" not in str(info.value)


def test_a_version_not_served_names_the_versions_that_are() -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    v2 = ResourceType("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", "mpijob", verbs=("list",))
    client: Any = _Client([v2])
    resolved = resolve_type("mpijobs.v1.kubeflow.org", client=client, store=store)
    assert resolved.resource is None and resolved.definition.name == "kubeflow-org-mpijob-v1"
    error = not_installed(resolved, client=client, token="mpijobs.v1.kubeflow.org")
    assert error.code == 3
    assert str(error) == (
        "MPIJob kubeflow.org/v1 is not served by this cluster; it serves kubeflow.org/v2beta1 "
        "(mpijobs.v2beta1.kubeflow.org)"
    )
    absent = resolve_type("rayclusters", client=client, store=store)
    assert str(not_installed(absent, client=client, token="rayclusters")) == (
        "RayCluster is not installed in this cluster"
    )


def test_not_found_reads_alike_for_every_command() -> None:
    error = not_found(JOBS, "train", namespace="ml")
    assert (str(error), error.code) == ('Job "train" not found in namespace "ml"', 3)
    assert error.hint == "'kli get jobs.batch -n ml' lists them; -n chooses another namespace"
    nodes = ResourceType("", "v1", "Node", "nodes", "node", namespaced=False)
    assert str(not_found(nodes, "n1", namespace="ml")) == 'Node "n1" not found'


def test_progress_only_after_the_delay_and_erased() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quick = Tty()
    with Progress("listing jobs", stream=quick, delay=5):
        pass
    assert quick.getvalue() == ""
    slow = Tty()
    with Progress("listing jobs", stream=slow, delay=0.0, interval=0.01) as progress:
        progress.add(3)
        while not progress.shown:
            pass
    assert "listing jobs... " in slow.getvalue() and slow.getvalue().endswith("\r\x1b[K")
    plain = io.StringIO()  # not a terminal: nothing
    with Progress("listing jobs", stream=plain, delay=0.0):
        pass
    assert plain.getvalue() == ""


# ------------------------------------------------------------------------------------- get_view


@pytest.mark.parametrize(
    ("seconds", "age"),
    [
        (-5, "<invalid>"),
        (0, "0s"),
        (119, "119s"),
        (125, "2m5s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (47 * 3600, "47h"),
        (50 * 3600, "2d2h"),
        (9 * 86400, "9d"),
        (800 * 86400, "2y70d"),
        (3000 * 86400, "8y"),
    ],
)
def test_human_age(seconds: int, age: str) -> None:
    created = (NOW - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert human_age(created, now=NOW) == age


def test_human_age_unknown() -> None:
    assert human_age(None, now=NOW) == "<unknown>"
    assert human_age("yesterday", now=NOW) == "<unknown>"


def test_phases_parse_and_any_match() -> None:
    wanted = parse_phases(["running,FAILED", " Completed "])
    assert wanted == {"Running", "Failed", "Completed"}
    assert keep({"phases": ["Initializing", "Failed"]}, wanted)
    assert not keep({"phases": ["Initializing"]}, wanted)
    assert keep({"phases": ["Initializing"]}, frozenset())


def test_sort_newest_then_kind_then_name() -> None:
    views: list[dict[str, Any]] = [
        {"name": "b", "kind": "Job", "createdAt": "2026-01-01T00:00:00Z"},
        {"name": "a", "kind": "PyTorchJob", "createdAt": "2026-01-02T00:00:00Z"},
        {"name": "a", "kind": "Job", "createdAt": "2026-01-01T00:00:00Z"},
        {"name": "z", "kind": "Job", "createdAt": None},
        {"name": "c", "kind": "JobSet", "createdAt": "2026-01-01T00:00:00Z"},
    ]
    assert [(v["kind"], v["name"]) for v in sort_views(views)] == [
        ("PyTorchJob", "a"),
        ("Job", "a"),
        ("Job", "b"),
        ("JobSet", "c"),
        ("Job", "z"),
    ]


def _view(name: str, components: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "ml",
        "kind": "PyTorchJob",
        "apiVersion": "kubeflow.org/v1",
        "createdAt": "2026-01-02T11:59:00Z",
        "definition": "d",
        "origin": "catalog",
        "phases": ["Running"],
        "gpus": 8,
        "components": [{"name": f"component-{i}", "replicas": i} for i in range(components)],
        **extra,
    }


def test_table_columns_and_width() -> None:
    """NAMESPACE first and only with -A, as kubectl; -o wide adds GANG and ORIGIN and never cuts; only a
    width (a terminal's) cuts COMPONENTS."""
    views = [_view("short"), _view("x" * 12, components=12)]
    table = Table(show_type=True, show_namespace=True, wide=True, now=lambda: NOW, width=100)
    lines = table.render(views).splitlines()
    assert lines[0].split() == [
        "NAMESPACE",
        "NAME",
        "TYPE",
        "PHASE",
        "GPU",
        "COMPONENTS",
        "AGE",
        "GANG",
        "ORIGIN",
    ]
    assert lines[1].split() == [
        "ml",
        "short",
        "PyTorchJob",
        "Running",
        "8",
        "component-0:0,component-1:1",
        "60s",
        "<none>",  # no gang state in the row
        "catalog",
    ]
    full = ",".join(f"component-{i}:{i}" for i in range(12))
    assert full in lines[2]  # wide never cuts
    cut = Table(show_type=True, wide=False, now=lambda: NOW, width=100).render(views).splitlines()
    assert all(len(line) <= 100 for line in cut)
    assert ",+" in cut[2] and full not in cut[2]  # a terminal's width cuts the list with "+N"
    assert full in Table(show_type=True, wide=False, now=lambda: NOW).render(views)  # no width: none
    plain = Table(show_type=False, wide=False, now=lambda: NOW).render([_view("a", components=0)])
    assert plain.splitlines() == [
        "NAME   PHASE     GPU   COMPONENTS   AGE",
        "a      Running   8     <none>       60s",
    ]
    bare = Table(show_type=False, wide=False, headers=False, now=lambda: NOW).render(
        [_view("a", components=0)]
    )
    assert bare.splitlines() == ["a   Running   8   <none>   60s"]


def test_colour_only_when_asked() -> None:
    coloured = Table(show_type=False, wide=False, now=lambda: NOW, colour=True).render([_view("a")])
    assert "\x1b[32mRunning\x1b[0m" in coloured
    assert "\x1b[" not in Table(show_type=False, wide=False, now=lambda: NOW).render([_view("a")])


def test_watch_lines_keep_the_widths() -> None:
    table = Table(show_type=False, wide=False, now=lambda: NOW)
    header = table.render([_view("first")]).splitlines()[0]
    line = table.line(_view("first"))
    assert line.index("Running") == header.index("PHASE")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not present")
def test_view_of_a_corpus_workload() -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    obj = yaml.safe_load(
        (CORPUS / "workloads" / "kubeflow-training-v1" / "pytorchjob-with-status.yaml").read_text()
    )
    (definition,) = store.resolve(obj["apiVersion"], obj["kind"])
    view = Summarizer(gpu_resources=("nvidia.com/gpu",)).summary(obj, definition)
    assert view == {
        "name": "pytorch-tcp-dist-mnist",
        "namespace": "default",
        "kind": "PyTorchJob",
        "apiVersion": "kubeflow.org/v1",
        "createdAt": "2018-12-16T21:39:09Z",
        "definition": "kubeflow-org-pytorchjob-v1",
        "origin": "catalog",
        "phases": ["Completed"],
        "gpus": 0,
        "components": [{"name": "master", "replicas": 1}, {"name": "worker", "replicas": 3}],
    }


def test_identity_of_a_client_certificate(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/O=ops/CN=kli-user",
            "-keyout",
            str(tmp_path / "key"),
            "-out",
            str(tmp_path / "cert"),
            "-days",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    config = ClusterConfig(server="s", context="dev", client_cert_data=(tmp_path / "cert").read_bytes())
    assert identity(config) == 'user "kli-user" (client certificate of context "dev")'
    broken = ClusterConfig(
        server="s", client_cert_data=b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----"
    )
    assert identity(broken) == "the client certificate"
