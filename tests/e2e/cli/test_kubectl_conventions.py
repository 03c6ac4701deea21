"""kubectl's conventions in ``kli`` against a real API server of its own (issue 12): the object
formats of ``kli get`` (``-o name``, ``-o jsonpath=``, ``-o custom-columns=``) with
``--no-headers`` and ``--sort-by``; NAMESPACE only with ``-A``; nothing cut off a terminal and
``-o wide`` never cut; several NAMEs for ``get`` and ``describe``, ``describe TYPE`` for every
workload of a type; "did you mean" and one not-found wording in ``get`` and ``describe``; a
version the cluster does not serve; ``kli version`` with the server's version.

The control plane is private to this module (its CRDs: PyTorchJob v1, MPIJob v2beta1 only, JobSet),
so that the rows are exactly the workloads created here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import _controlplane
from .conftest import Result
from .getsupport import corpus_object, private_control_plane

CRDS = ("kubeflow.org_pytorchjobs.yaml", "kubeflow.org_mpijobs.yaml", "jobset.x-k8s.io_jobsets.yaml")
NS = "ml-team"
OTHER_NS = "research"


def _wide_jobset(name: str, jobs: int) -> dict[str, Any]:
    """A JobSet of ``jobs`` replicated Jobs: a COMPONENTS cell far wider than 100 columns."""
    template = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicatedJobs": [
                {"name": f"replicated-job-{i:02d}", "replicas": 1, "template": template} for i in range(jobs)
            ]
        },
    }


@pytest.fixture(scope="module")
def conventions_cluster(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[Path]:
    """PyTorchJobs mnist-a (2 GPUs), mnist-b (0) and mnist-c (labelled) in ml-team, simple in
    research, and a JobSet of 12 replicated Jobs; its kubeconfig."""
    with private_control_plane(tmp_path_factory, corpus, crds=CRDS, namespaces=(NS, OTHER_NS)) as (
        kubeconfig,
        client,
    ):
        gpu = "kubeflow-training-v1/pytorchjob-mnist-nccl-gpu.yaml"
        plain = "kubeflow-training-v1/pytorchjob-simple.yaml"
        for relative, ns, name, labels in (
            (gpu, NS, "mnist-a", {}),
            (plain, NS, "mnist-b", {}),
            (plain, NS, "mnist-c", {"team": "c"}),
            (plain, OTHER_NS, "simple", {}),
        ):
            obj, _ = corpus_object(corpus, relative, namespace=ns, name=name, labels=labels)
            client.create(obj)
        client.create(_wide_jobset("wide", 12))
        yield kubeconfig


@pytest.fixture
def kli_on(kli: Callable[..., Result], conventions_cluster: Path) -> Callable[..., Result]:
    def run(*args: str) -> Result:
        return kli(*args, "--kubeconfig", str(conventions_cluster))

    return run


def _lines(result: Result) -> list[str]:
    assert result.code == 0, result.err
    return result.out.splitlines()


# ------------------------------------------------------------------------------ object formats


def test_get_dash_o_name(kli_on: Callable[..., Result]) -> None:
    assert _lines(kli_on("get", "pytorchjobs", "-n", NS, "-o", "name", "--sort-by=.name")) == [
        "pytorchjob.kubeflow.org/mnist-a",
        "pytorchjob.kubeflow.org/mnist-b",
        "pytorchjob.kubeflow.org/mnist-c",
    ]
    assert _lines(kli_on("get", "jobset/wide", "-n", NS, "-o", "name")) == ["jobset.jobset.x-k8s.io/wide"]


def test_get_dash_o_jsonpath(kli_on: Callable[..., Result]) -> None:
    names = kli_on("get", "pytorchjobs", "-n", NS, "--sort-by=.name", "-o", "jsonpath={.items[*].name}")
    assert (names.code, names.out) == (0, "mnist-a mnist-b mnist-c")
    ranged = kli_on(
        "get",
        "pytorchjobs",
        "-A",
        "--sort-by",
        ".name",
        "-o",
        'jsonpath={range .items[?(@.gpus>0)]}{.namespace}/{.name}{"\\t"}{.gpus}{"\\n"}{end}',
    )
    assert ranged.out == "ml-team/mnist-a\t2\n"
    one = kli_on("get", "pytorchjob", "mnist-a", "-n", NS, "-o", "jsonpath={.components[*].name}")
    assert one.out == "master worker"  # one named workload: the template sees the bare object


def test_get_custom_columns_no_headers_and_sort_by(kli_on: Callable[..., Result]) -> None:
    spec = "custom-columns=NAME:.name,GPU:.gpus,PHASES:.phases"
    by_gpus = _lines(kli_on("get", "pytorchjobs", "-n", NS, "-o", spec, "--sort-by", "{.gpus}"))
    assert by_gpus[0].split() == ["NAME", "GPU", "PHASES"]
    assert [line.split()[:2] for line in by_gpus[1:]][-1] == ["mnist-a", "2"]  # ascending: most GPUs last
    bare = _lines(kli_on("get", "pytorchjobs", "-n", NS, "-o", spec, "--no-headers", "--sort-by=.name"))
    assert [line.split()[0] for line in bare] == ["mnist-a", "mnist-b", "mnist-c"]
    table = _lines(kli_on("get", "pytorchjobs", "-n", NS, "--no-headers", "--sort-by=.name"))
    assert [line.split()[0] for line in table] == ["mnist-a", "mnist-b", "mnist-c"]
    wrong = kli_on("get", "pytorchjobs", "-n", NS, "--sort-by=.metadata.name")
    assert (wrong.code, wrong.out) == (2, "")
    assert "error: --sort-by .metadata.name: no object has this field" in wrong.err
    assert ".createdAt" in wrong.err  # the hint names the fields there are


def test_namespace_column_only_with_all_namespaces(kli_on: Callable[..., Result]) -> None:
    here = _lines(kli_on("get", "pytorchjobs", "-n", NS))
    assert here[0].split() == ["NAME", "PHASE", "GPU", "COMPONENTS", "AGE"]
    everywhere = _lines(kli_on("get", "pytorchjobs", "-A", "--sort-by=.name"))
    assert everywhere[0].split() == ["NAMESPACE", "NAME", "PHASE", "GPU", "COMPONENTS", "AGE"]
    assert [line.split()[:2] for line in everywhere[1:]] == [
        ["ml-team", "mnist-a"],
        ["ml-team", "mnist-b"],
        ["ml-team", "mnist-c"],
        ["research", "simple"],
    ]


def test_nothing_is_cut_off_a_terminal_and_wide_never_cuts(
    kli_on: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    full = ",".join(f"replicated-job-{i:02d}:1" for i in range(12))
    (_, piped) = _lines(kli_on("get", "jobsets", "-n", NS))
    assert full in piped and len(piped) > 100
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    (_, on_terminal) = _lines(kli_on("get", "jobsets", "-n", NS))
    assert len(on_terminal) <= 100 and full not in on_terminal and ",+" in on_terminal
    (_, wide) = _lines(kli_on("get", "jobsets", "-n", NS, "-o", "wide"))
    assert full in wide and wide.endswith("catalog")


# ------------------------------------------------------------------------------ several names


def test_get_several_names(kli_on: Callable[..., Result]) -> None:
    two = _lines(kli_on("get", "pytorchjob", "mnist-b", "mnist-a", "-n", NS))
    assert [line.split()[0] for line in two[1:]] == ["mnist-b", "mnist-a"]  # in the order asked for
    pairs = _lines(kli_on("get", "pytorchjob/mnist-a", "jobset/wide", "-n", NS, "-o", "name"))
    assert pairs == ["pytorchjob.kubeflow.org/mnist-a", "jobset.jobset.x-k8s.io/wide"]
    as_json = json.loads(kli_on("get", "pytorchjob", "mnist-a", "mnist-b", "-n", NS, "-o", "json").out)
    assert as_json["count"] == 2 and [v["name"] for v in as_json["items"]] == ["mnist-a", "mnist-b"]
    missing = kli_on("get", "pytorchjob", "mnist-a", "nope", "gone", "-n", NS)
    assert missing.code == 3
    assert [line.split()[0] for line in missing.out.splitlines()[1:]] == ["mnist-a"]  # the rest is printed
    assert missing.err.splitlines()[-3:] == [
        'error: PyTorchJob "nope" not found in namespace "ml-team"',
        'error: PyTorchJob "gone" not found in namespace "ml-team"',
        "hint: 'kli get pytorchjobs.kubeflow.org -n ml-team' lists them; -n chooses another namespace",
    ]


def test_describe_several_names_and_every_workload_of_a_type(kli_on: Callable[..., Result]) -> None:
    def heads(result: Result) -> list[str]:
        return [line.split()[0] for line in _lines(result) if "   definition: " in line]

    assert heads(kli_on("describe", "pytorchjob", "mnist-b", "mnist-a", "-n", NS)) == [
        "PyTorchJob/mnist-b",
        "PyTorchJob/mnist-a",
    ]
    assert heads(kli_on("describe", "pytorchjob/mnist-a", "jobset/wide", "-n", NS)) == [
        "PyTorchJob/mnist-a",
        "JobSet/wide",
    ]
    every = kli_on("describe", "pytorchjobs", "-n", NS)
    assert heads(every) == ["PyTorchJob/mnist-a", "PyTorchJob/mnist-b", "PyTorchJob/mnist-c"]
    assert "\n\n\nPyTorchJob/mnist-b" in every.out  # two blank lines between workloads, as kubectl
    assert heads(kli_on("describe", "pytorchjobs", "-n", NS, "-l", "team=c")) == ["PyTorchJob/mnist-c"]
    assert heads(kli_on("describe", "pytorchjobs", "-A")) == [
        "PyTorchJob/mnist-a",
        "PyTorchJob/mnist-b",
        "PyTorchJob/mnist-c",
        "PyTorchJob/simple",
    ]
    as_json = json.loads(kli_on("describe", "pytorchjobs", "-n", NS, "-o", "json").out)
    assert [v["name"] for v in as_json["items"]] == ["mnist-a", "mnist-b", "mnist-c"]
    template = "jsonpath={range .items[*]}{.name}={.resources.gpus};{end}"
    assert kli_on("describe", "pytorchjobs", "-n", NS, "-o", template).out == "mnist-a=2;mnist-b=0;mnist-c=0;"
    one = yaml.safe_load(kli_on("describe", "pytorchjob", "mnist-a", "-n", NS, "-o", "yaml").out)
    assert one["name"] == "mnist-a"  # one named workload: the bare report (17.6)
    none = kli_on("describe", "pytorchjobs", "-n", NS, "-l", "team=nobody")
    assert (none.code, none.out) == (0, "")
    assert "No workloads found in namespace ml-team." in none.err
    missing = kli_on("describe", "pytorchjob", "mnist-a", "nope", "-n", NS)
    assert missing.code == 3 and heads(Result(0, missing.out, "")) == ["PyTorchJob/mnist-a"]
    assert 'error: PyTorchJob "nope" not found in namespace "ml-team"' in missing.err


# ------------------------------------------------------------------------------ types


def test_did_you_mean_and_one_wording_in_get_and_describe(kli_on: Callable[..., Result]) -> None:
    errors = []
    for command in ("get", "describe"):
        typo = kli_on(command, "pytorchjbs", "-n", NS)
        assert typo.code == 4
        errors.append([line for line in typo.err.splitlines() if not line.startswith("warning:")])
        missing = kli_on(command, "pytorchjob", "nope", "-n", NS)
        assert missing.code == 3
        errors.append([line for line in missing.err.splitlines() if not line.startswith("warning:")])
    get_typo, get_missing, describe_typo, describe_missing = errors
    assert get_typo == describe_typo
    assert get_typo[0] == (
        'error: no Karta definition covers "pytorchjbs" (and the server has no resource type '
        '"pytorchjbs"); did you mean pytorchjobs?'
    )
    assert (
        get_missing
        == describe_missing
        == [
            'error: PyTorchJob "nope" not found in namespace "ml-team"',
            "hint: 'kli get pytorchjobs.kubeflow.org -n ml-team' lists them; -n chooses another namespace",
        ]
    )
    qualified = kli_on("get", "pytorchjobs.kubeflow.rog", "-n", NS)
    assert qualified.err.splitlines()[-2].endswith("did you mean pytorchjobs.kubeflow.org?")


def test_a_version_the_cluster_does_not_serve(kli_on: Callable[..., Result]) -> None:
    served = "MPIJob kubeflow.org/v1 is not served by this cluster; it serves kubeflow.org/v2beta1"
    listing = kli_on("get", "mpijobs.v1.kubeflow.org", "-n", NS)
    assert (listing.code, listing.out) == (0, "")
    assert f"warning: {served} (mpijobs.v2beta1.kubeflow.org)" in listing.err
    for command in ("get", "describe"):
        named = kli_on(command, "mpijobs.v1.kubeflow.org/x", "-n", NS)
        assert named.code == 3
        assert f"error: {served} (mpijobs.v2beta1.kubeflow.org)\n" in named.err
        assert "hint: name a served version, or just mpijobs for the preferred one" in named.err
    preferred = kli_on("get", "mpijobs", "-n", NS)
    assert preferred.code == 0 and "No workloads found in namespace ml-team." in preferred.err


# ------------------------------------------------------------------------------ version


def test_version_asks_the_server(kli_on: Callable[..., Result]) -> None:
    from karta import __version__

    pinned = _controlplane().pinned_versions()["kubernetes"]
    text = kli_on("version")
    assert text.out.splitlines() == [
        f"Client Version: {__version__}",
        f"Server Version: v{pinned.lstrip('v')}",
    ]
    data = json.loads(kli_on("version", "-o", "json").out)
    assert data["clientVersion"]["version"] == __version__
    assert data["serverVersion"]["gitVersion"] == f"v{pinned.lstrip('v')}"
    assert kli_on("version", "--client").out == f"Client Version: {__version__}\n"
