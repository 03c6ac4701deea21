"""An informer on a resource the API server does not serve (issue 28): the real answer is "404
page not found", which says nothing of what is missing. The log line names the resource and, for
the Karta CRD, how to install it (karta-controller logs it when kartas.run.ai is not installed);
said once at WARNING, then at DEBUG while it stays missing."""

from __future__ import annotations

import dataclasses
import logging
import threading

import pytest

from karta.kube import KubeClient
from karta.kube.informer import Informer
from karta.kube.kartas import KARTA_RESOURCE
from karta.kube.resources import ResourceType

from ..kubehttp import wait

UNSERVED_KARTAS = dataclasses.replace(KARTA_RESOURCE, version="v9")  # kartas.run.ai, never served at v9


@pytest.mark.parametrize(
    ("rtype", "expected"),
    [
        (
            UNSERVED_KARTAS,
            "the Karta CRD kartas.run.ai is not installed, so no Karta definitions are read from the "
            "cluster: install it with 'kli crd | kubectl apply -f -' or the Helm chart (charts/karta "
            "installs it); retrying",
        ),
        (
            dataclasses.replace(KARTA_RESOURCE, group="absent.acme.ai", kind="Widget", plural="widgets"),
            "the API server does not serve widgets.absent.acme.ai (404: its CRD is not installed?); retrying",
        ),
    ],
    ids=["karta-crd", "other-crd"],
)
def test_a_missing_crd_is_named_once(
    kube: KubeClient, caplog: pytest.LogCaptureFixture, rtype: ResourceType, expected: str
) -> None:
    log = logging.getLogger("karta.test.informer")
    informer = Informer(kube, rtype, retry_s=0.05, log=log)
    stop = threading.Event()
    caplog.set_level(logging.DEBUG, logger=log.name)
    thread = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait("three attempts", lambda: sum(1 for r in caplog.records if r.name == log.name) >= 3, timeout=30)
    finally:
        stop.set()
        thread.join(timeout=10)
    records = [r for r in caplog.records if r.name == log.name]
    assert len(records) >= 3, records
    assert {r.getMessage() for r in records} == {expected}
    assert [r.levelno for r in records[:3]] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert "404 page not found" in records[0].error  # type: ignore[attr-defined]  # kept as detail
