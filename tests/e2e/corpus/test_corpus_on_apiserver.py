"""Every CRD and every workload document of the shared corpus, created on a real API server.

One test per document: either the server takes it (strict field validation) and reading it back
gives every field that was sent, or it is listed in ``docs/corpus-on-apiserver.md`` and the
server's answer contains the reason given there. Nothing is skipped.
"""

from __future__ import annotations

import base64
import re
import sys
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest

from .corpus_files import ALTERNATE_CRDS, NOTE, corpus_crds, documented_rejections, workload_documents
from .corpus_install import CorpusRun

DOCUMENTS = workload_documents()
REJECTED = documented_rejections()
_ABSENT = object()
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")
_SUFFIX = {"": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_SUFFIX |= {"E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _quantity(value: Any) -> Decimal | None:
    """A Kubernetes resource quantity's value (built-in kinds store the canonical form: 3000m -> 3)."""
    match = _QUANTITY.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    try:
        return Decimal(match[1]) * _SUFFIX[match[2] or ""]
    except InvalidOperation:
        return None


def _same(sent: Any, stored: Any) -> bool:
    if stored is _ABSENT:
        return False
    if stored == sent:
        return True
    a, b = _quantity(sent), _quantity(stored)
    return a is not None and a == b


def _missing(sent: Any, stored: Any, path: str) -> list[str]:
    """Paths of ``sent`` that the stored object does not hold (the server may add fields)."""
    if sent is None or sent == {} or sent == []:
        return []  # nulls are pruned; empty maps and lists may be omitted on output
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [path or "."]
        return [m for k, v in sent.items() for m in _missing(v, stored.get(k, _ABSENT), f"{path}.{k}")]
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [path]
        return [m for i, v in enumerate(sent) for m in _missing(v, stored[i], f"{path}[{i}]")]
    return [] if _same(sent, stored) else [f"{path}: sent {sent!r}, stored {stored!r}"]


def _readback_gaps(sent: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    gaps = []
    if sent.get("kind") == "Secret" and sent.get("apiVersion") == "v1" and "stringData" in sent:
        # The server folds stringData into data (base64) and does not store stringData itself.
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in sent["stringData"].items()}
        sent = {k: v for k, v in sent.items() if k != "stringData"}
        sent["data"] = {**sent.get("data", {}), **encoded}
    for key, value in sent.items():
        if key == "metadata":
            for meta_key in ("name", "labels", "annotations"):
                gaps += _missing(
                    value.get(meta_key), stored["metadata"].get(meta_key, _ABSENT), f".metadata.{meta_key}"
                )
        else:
            gaps += _missing(value, stored.get(key, _ABSENT), f".{key}")
    return gaps


def test_every_corpus_crd_is_established(corpus_run: CorpusRun) -> None:
    first, alternates = corpus_crds()
    assert sorted(corpus_run.crds) == sorted(c.file for c in first + alternates)
    assert {f: s for f, s in corpus_run.crds.items() if s != "Established"} == {}
    assert {c.file for c in alternates} == set(ALTERNATE_CRDS)


def test_nothing_is_skipped(corpus_run: CorpusRun) -> None:
    assert [o.doc.ref for o in corpus_run.outcomes] == [d.ref for d in DOCUMENTS]
    print(f"\ncorpus on the API server: {corpus_run.seconds}", file=sys.stderr)


def test_the_note_summary_counts_are_current(corpus_run: CorpusRun) -> None:
    text = NOTE.read_text(encoding="utf-8")
    match = re.search(r"(\d+) documents in (\d+) files: (\d+) created .*?, (\d+) refused", text, re.S)
    assert match, f"no summary line in {NOTE.name}"
    accepted = sum(o.accepted for o in corpus_run.outcomes)
    counts = (len(DOCUMENTS), len({d.file for d in DOCUMENTS}), accepted, len(DOCUMENTS) - accepted)
    assert tuple(int(g) for g in match.groups()) == counts
    assert f"{len(corpus_run.crds)} CRD files" in text


def test_the_note_lists_only_corpus_documents() -> None:
    assert REJECTED, f"no rejection table found in {NOTE}"
    assert set(REJECTED) <= {d.ref for d in DOCUMENTS}


@pytest.mark.parametrize("ref", [d.ref for d in DOCUMENTS])
def test_document_is_created_or_its_rejection_is_documented(corpus_run: CorpusRun, ref: str) -> None:
    outcome = corpus_run.by_ref()[ref]
    if ref in REJECTED:
        rejection = REJECTED[ref]
        assert not outcome.accepted, f"{ref} is listed in {NOTE.name} but the server took it"
        assert rejection.answer in outcome.message, outcome.message
        assert outcome.lenient == rejection.lenient, outcome.message
        return
    assert outcome.accepted, f"HTTP {outcome.status}/{outcome.status_update}: {outcome.message}"
    assert outcome.lenient is None
    assert _readback_gaps(outcome.submitted, outcome.stored) == []
