"""Reading the shared corpus for the API-server tests: CRDs, workload documents, the test-data note.

Owns :func:`workload_documents` (every non-empty document of ``workloads/*/*.yaml``, parsed as
``kubectl`` parses YAML: timestamps stay strings), :func:`corpus_crds` (the CRDs split into the
set installed first and the alternates that share a CRD name with one of them), and
:func:`documented_rejections` (the table of ``docs/corpus-on-apiserver.md`` the test asserts).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus"
NOTE = REPO / "docs" / "corpus-on-apiserver.md"

# The two MPIJob CRDs are both named mpijobs.kubeflow.org (SOURCES.md, "CRD installation notes"):
# the mpi-operator one (v2beta1) is installed with the others, the training-operator one (v1)
# replaces it afterwards for the documents that need it.
ALTERNATE_CRDS = ("kubeflow.org_mpijobs.training-operator-v1.yaml",)


class _KubectlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML without the timestamp type: like kubectl, a timestamp is sent as the string written."""


_KubectlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_documents(path: Path) -> list[Any]:
    """Every non-empty YAML document of ``path``."""
    return [doc for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_KubectlLoader) if doc]


@dataclass(frozen=True)
class Document:
    """One workload document of the corpus; ``ref`` is ``<framework>/<file>.yaml#<index>``."""

    file: str  # relative to workloads/, e.g. "kuberay/rayjob-sample.yaml"
    index: int
    body: Any

    @property
    def ref(self) -> str:
        return f"{self.file}#{self.index}"

    @property
    def api_version(self) -> str:
        return str(self.body.get("apiVersion", "")) if isinstance(self.body, dict) else ""

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", "")) if isinstance(self.body, dict) else ""


def workload_documents() -> list[Document]:
    """Every document of ``workloads/*/*.yaml`` (status fragments live one level deeper)."""
    base = CORPUS / "workloads"
    out = []
    for path in sorted(base.glob("*/*.yaml")):
        rel = path.relative_to(base).as_posix()
        out.extend(Document(rel, i, doc) for i, doc in enumerate(load_documents(path)))
    return out


@dataclass(frozen=True)
class CorpusCRD:
    file: str
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.body["metadata"]["name"])

    def serves(self, api_version: str, kind: str) -> bool:
        group, _, version = api_version.rpartition("/")
        spec = self.body["spec"]
        return (
            spec["group"] == group
            and spec["names"]["kind"] == kind
            and any(v["name"] == version and v.get("served", True) for v in spec["versions"])
        )


@functools.cache
def corpus_crds() -> tuple[list[CorpusCRD], list[CorpusCRD]]:
    """(installed first, alternates): every CRD file of ``crds/`` (parsed once: 20 MB of YAML)."""
    first, alternates = [], []
    for path in sorted((CORPUS / "crds").glob("*.yaml")):
        [body] = load_documents(path)
        crd = CorpusCRD(path.name, body)
        (alternates if path.name in ALTERNATE_CRDS else first).append(crd)
    return first, alternates


_ROW = re.compile(
    r"^\|\s*`(?P<ref>[^`]+#\d+)`\s*\|[^|]*\|\s*`(?P<answer>[^`]+)`\s*\|\s*(?P<lenient>created|refused|-)\s*\|"
)


@dataclass(frozen=True)
class Rejection:
    """A row of the note: a substring of the server's answer, and what ``fieldValidation=Warn`` does
    (``created``, ``refused``, or None when the refusal is not about unknown fields)."""

    answer: str
    lenient: str | None


def documented_rejections() -> dict[str, Rejection]:
    """``{ref: Rejection}`` from the rejection table of the test-data note."""
    out: dict[str, Rejection] = {}
    for line in NOTE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            assert match["ref"] not in out, f"listed twice in {NOTE.name}: {match['ref']}"
            lenient = None if match["lenient"] == "-" else match["lenient"]
            out[match["ref"]] = Rejection(match["answer"], lenient)
    return out
