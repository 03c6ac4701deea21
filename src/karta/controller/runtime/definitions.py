"""The definitions the controller uses, kept current: catalog < directory < cluster Kartas.

The same precedence per root GVK as ``kli`` (docs/spec/format.md#definition-sources,
:class:`DefinitionStore`). Cluster Kartas come from the shared cache's informer on ``kartas.run.ai``
(:class:`karta.kube.cache.SharedCache`: the Karta operator and the Karta webhooks read the same one);
every change rebuilds the store (a new immutable snapshot, swapped atomically) and calls the
subscribers with it. A Karta that does not decode is left out, with a warning in the log (the
operator reports it on the object). Without the Kartas CRD (404) or the right to list them,
the store holds the catalog and the directory, and the informer retries.

A rebuild decodes only what changed: the decoding of each object is kept by its uid and
``resourceVersion``, and a decoded spec equal to one decoded before (same content hash, then
equal) is replaced by that earlier spec object. The generated code of a definition
(:mod:`karta._codegen`) is cached by the identity of its component and status definitions, so a
cluster Karta's code is built once per spec content in this process, not again on every event
(the operator's own status writes, another Karta's change). It is built in memory only: the
controller reads no on-disk code cache (``karta.controller.main`` turns it off).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from karta.controller.runtime.logs import logger
from karta.definitions import DefinitionStore
from karta.errors import ApiError, KartaError
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.informer import Informer
from karta.kube.kartas import KARTA_RESOURCE, decode_cluster_karta
from karta.model import Karta
from karta.model.types import KartaSpec
from karta.rbac import rule

__all__ = ["LiveDefinitions", "definitions_rules"]

_LOG = logger("definitions")


class LiveDefinitions:
    """``store`` is the current snapshot; ``subscribe`` to hear of every new one."""

    name = "definitions"

    def __init__(
        self,
        client: KubeClient,
        *,
        user_directory: Path | None = None,
        include_catalog: bool = True,
        cluster: bool = True,
        cache: SharedCache | None = None,
    ) -> None:
        self.user_directory = user_directory
        self.include_catalog = include_catalog
        self.cluster = cluster
        self._own_cache = cache is None
        self.cache = cache or SharedCache(client, log=_LOG)
        self.informer: Informer
        if cluster:
            watch = self.cache.watch(KARTA_RESOURCE, handler=self._changed, on_error=self._on_error)
            self.informer = watch.informer
        else:  # never run: the cluster's Kartas are not read
            self.informer = Informer(client, KARTA_RESOURCE, name="informer/kartas")
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[DefinitionStore], None]] = []
        self._base = DefinitionStore.load(
            user_directory=user_directory,  # None: $KARTA_DEFINITIONS or ~/.karta/definitions, as kli
            include_catalog=include_catalog,
        )
        self.store: DefinitionStore = self._base
        self.synced = threading.Event()
        if not cluster:
            self.synced.set()
        # (uid, resourceVersion) -> (decoded, why not); spec content hash -> the spec first decoded
        # with it. Both hold the current objects' entries only (replaced by every listing).
        self._decoded: dict[tuple[str, str], tuple[Karta | None, str]] = {}
        self._specs: dict[str, KartaSpec] = {}

    def subscribe(self, callback: Callable[[DefinitionStore], None]) -> None:
        self._subscribers.append(callback)

    def _on_error(self, exc: KartaError) -> None:
        if isinstance(exc, ApiError) and exc.status in (403, 404):
            self.synced.set()  # nothing to wait for: the catalog and the directory are what there is

    def _changed(self, _kind: str, _obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        if self.informer.synced.is_set():
            self.rebuild()

    def kartas(self) -> list[tuple[dict[str, Any], Karta | None, str]]:
        """Every cluster Karta object: (object, decoded or None, why not)."""
        out = []
        decoded: dict[tuple[str, str], tuple[Karta | None, str]] = {}
        specs: dict[str, KartaSpec] = {}
        with self._lock:
            known_decoded, known_specs = self._decoded, self._specs
        for obj in sorted(self.informer.objects(), key=lambda o: str((o.get("metadata") or {}).get("name"))):
            metadata = obj.get("metadata") or {}
            version = (str(metadata.get("uid") or ""), str(metadata.get("resourceVersion") or ""))
            found = known_decoded.get(version) if all(version) else None
            if found is None:
                found = decode_cluster_karta(obj)
            karta, problem = found
            if karta is not None:
                key = _spec_hash(obj)
                earlier = specs.get(key)
                if earlier is None:
                    earlier = known_specs.get(key)
                if earlier is not None and earlier is not karta.spec and earlier == karta.spec:
                    karta = karta.model_copy(update={"spec": earlier})
                    found = (karta, problem)
                specs.setdefault(key, karta.spec)
            if all(version):
                decoded[version] = found
            out.append((obj, karta, problem))
        with self._lock:
            self._decoded, self._specs = decoded, specs
        return out

    def rebuild(self) -> DefinitionStore:
        decoded: list[Karta] = []
        warnings: list[str] = []
        for obj, karta, problem in self.kartas():
            if (obj.get("metadata") or {}).get("deletionTimestamp"):
                continue
            if karta is None:
                warnings.append(
                    f"skipping the cluster Karta {(obj.get('metadata') or {}).get('name')}: {problem}"
                )
                continue
            decoded.append(karta)
        store = self._base.with_cluster(decoded, warnings=warnings)
        with self._lock:
            self.store = store
        for callback in list(self._subscribers):
            try:
                callback(store)
            except Exception:
                _LOG.exception("definitions subscriber failed")
        return store

    def run(self, stop: threading.Event) -> None:
        if not self.cluster:
            stop.wait()
            return

        def first_sync() -> None:
            self.informer.synced.wait()
            if not stop.is_set():
                self.rebuild()
                self.synced.set()

        threading.Thread(target=first_sync, name="definitions-sync", daemon=True).start()
        if self._own_cache:
            self.cache.run(stop)
        else:
            stop.wait()


def _spec_hash(obj: dict[str, Any]) -> str:
    spec = json.dumps(obj.get("spec"), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(spec.encode()).hexdigest()


def definitions_rules() -> list[dict[str, Any]]:
    """The RBAC rules of the definitions cache (and of the Karta watch the operator and the Karta
    webhooks share): list and watch ``kartas.run.ai``."""
    return [rule("run.ai", ["kartas"], ["list", "watch"])]
