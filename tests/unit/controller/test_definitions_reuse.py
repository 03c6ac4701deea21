"""The controller's definitions (runtime.definitions.LiveDefinitions): a rebuild decodes only what
changed, and a cluster Karta whose spec did not change keeps its spec objects, so that its
generated code (cached by the identity of its component and status definitions) is built once
per spec content in the process, not again on every Karta event. The controller reads no
on-disk code cache."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import yaml

from karta import _codegen
from karta.controller.runtime.definitions import LiveDefinitions
from karta.extract import factory
from karta.kube import KubeClient
from karta.kube.config import ClusterConfig
from karta.status.extract import _compiled_status

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "definitions" / "example-dev-jobgroup-v1.yaml"


class _Informer:
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.items = objects

    def objects(self) -> list[dict[str, Any]]:
        return list(self.items)


def _karta(name: str, uid: str, version: str, **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    obj["metadata"] = {"name": name, "uid": uid, "resourceVersion": version}
    if status:
        obj["status"] = status
    return obj


def _live(objects: list[dict[str, Any]]) -> tuple[LiveDefinitions, _Informer]:
    live = LiveDefinitions(KubeClient(ClusterConfig(server="https://127.0.0.1:1")), cluster=False)
    informer = _Informer(objects)
    live.informer = informer  # type: ignore[assignment]
    return live, informer


def test_an_unchanged_object_is_not_decoded_again_and_a_status_change_keeps_the_spec() -> None:
    first = _karta("a", "u1", "1")
    live, informer = _live([first])
    ((_, karta1, _),) = live.kartas()
    assert karta1 is not None
    ((_, again, _),) = live.kartas()
    assert again is karta1  # same uid and resourceVersion: the decoding is reused
    changed = _karta("a", "u1", "2", conditions=[{"type": "Ready", "status": "True", "reason": "Valid"}])
    informer.items = [changed]
    ((_, karta2, _),) = live.kartas()
    assert karta2 is not None and karta2 is not karta1
    assert karta2.status is not None  # the new status is the new object's
    assert karta2.spec is karta1.spec  # the spec decoded before: its generated code is reused
    root = karta2.root
    assert root.status_definition is not None
    assert _compiled_status(root.status_definition) is _compiled_status(karta1.root.status_definition)  # type: ignore[arg-type]
    assert factory._plan_for(root) is factory._plan_for(karta1.root)


def test_another_object_with_an_equal_spec_shares_it_and_a_changed_spec_does_not() -> None:
    a = _karta("a", "u1", "1")
    b = _karta("b", "u2", "1")
    live, informer = _live([a, b])
    (_, ka, _), (_, kb, _) = live.kartas()
    assert ka is not None and kb is not None and ka.spec is kb.spec
    c = copy.deepcopy(b)
    c["metadata"]["resourceVersion"] = "2"
    c["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["phaseDefinition"] = {
        "path": ".status.other"
    }
    informer.items = [a, c]
    (_, ka2, _), (_, kc, _) = live.kartas()
    assert ka2 is ka and kc is not None and kc.spec is not ka.spec and kc.spec != ka.spec


def test_the_controller_turns_the_disk_cache_off(monkeypatch: Any) -> None:
    from karta.controller import main as controller_main

    calls: list[bool] = []
    monkeypatch.setattr(_codegen, "use_disk_cache", calls.append)

    def stop(*_: Any, **__: Any) -> None:
        raise SystemExit(0)

    monkeypatch.setattr(controller_main, "configure", stop)
    with contextlib.suppress(SystemExit):
        controller_main.main([])
    assert calls == [False]
