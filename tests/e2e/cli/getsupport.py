"""Helpers of the ``kli get`` e2e tests: a control plane of a module's own with corpus CRDs, corpus
workloads made creatable, creation in one second (so that the newest-first order is
deterministic), golden files with ages and times normalised."""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..conftest import _controlplane
from ..kube.conftest import wait_discovered
from ..kubehttp import load_manifests

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = bool(os.environ.get("KARTA_UPDATE_GOLDEN"))


@contextmanager
def private_control_plane(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    *,
    crds: Sequence[str],
    namespaces: Sequence[str],
) -> Iterator[tuple[Path, KubeClient]]:
    """A control plane of the calling module's own (skipped against KARTA_TEST_KUBECONFIG) with
    the corpus CRDs ``crds`` served and ``namespaces`` created: its kubeconfig and a client
    (closed afterwards)."""
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs a control plane of its own (KARTA_TEST_KUBECONFIG is set)")
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries())
    with cp_mod.ControlPlane(config=config, workdir=tmp_path_factory.mktemp("private-cp")) as cp:
        client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cp.kubeconfig)))
        try:
            for ns in namespaces:
                client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            for file_name in crds:
                (crd,) = load_manifests(corpus / "crds" / file_name)
                client.create(crd)
                wait_discovered(client, crd)
            yield cp.kubeconfig, client
        finally:
            client.close()


def corpus_object(
    corpus: Path,
    relative: str,
    *,
    namespace: str,
    name: str | None = None,
    labels: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The first object of a corpus manifest, ready to create (server-set metadata and status
    removed), and its status (to write through the status subresource), if any."""
    (doc, *_) = load_manifests(corpus / "workloads" / relative)
    obj = copy.deepcopy(doc)
    status = obj.pop("status", None)
    meta = obj.get("metadata") or {}
    obj["metadata"] = {
        "name": name or meta["name"],
        "namespace": namespace,
        "labels": {**(meta.get("labels") or {}), **(labels or {})},
    }
    return obj, status


def create_in_one_second(client: KubeClient, objects: Sequence[dict[str, Any]], *, attempts: int = 5) -> None:
    """Create ``objects`` so that they share one ``creationTimestamp`` second (ties are ordered by
    Kind and name, so the golden row order is stable); retried in a later second if needed."""
    for _ in range(attempts):
        time.sleep(1.02 - (time.time() % 1.0))  # just after a second boundary
        created = [client.create(o) for o in objects]
        stamps = {c["metadata"]["creationTimestamp"] for c in created}
        if len(stamps) == 1:
            return
        for c in created:
            rtype = client.discovery.for_api_version(c["apiVersion"], c["kind"])
            client.delete(rtype, c["metadata"]["name"], namespace=c["metadata"].get("namespace"))
        time.sleep(0.5)
    raise AssertionError("could not create the objects within one second")


def normalise_table(text: str) -> str:
    """AGE cells become ``<age>`` (the column keeps its place)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("NAME"):
        return text
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    names = lines[0].split()
    if "AGE" not in names:
        return text
    i = names.index("AGE")
    begin = starts[i]
    end = starts[i + 1] if i + 1 < len(starts) else None
    out = []
    for n, line in enumerate(lines):
        if n == 0:
            out.append(line)
            continue
        if end is None:
            out.append(line[:begin] + "<age>")
        else:
            out.append((line[:begin] + "<age>".ljust(end - begin) + line[end:]).rstrip())
    return "\n".join(out) + "\n"


def normalise_data(text: str) -> str:
    """``createdAt`` values (JSON and YAML) become ``<time>``."""
    text = re.sub(r'"createdAt": "[^"]+"', '"createdAt": "<time>"', text)
    return re.sub(r"createdAt: '?[0-9TZ:.-]+'?", "createdAt: <time>", text)


def check_golden(name: str, actual: str, *, substitute: Callable[[str], str] = lambda s: s) -> None:
    """Compare with ``golden/<name>`` (write it with KARTA_UPDATE_GOLDEN=1, then review it)."""
    path = GOLDEN / name
    actual = substitute(actual)
    if UPDATE or not path.exists():
        path.write_text(actual)
        if not UPDATE:
            raise AssertionError(f"wrote the new golden {path}: review it and run again")
    assert actual == path.read_text(), f"differs from {path}:\n{actual}"
