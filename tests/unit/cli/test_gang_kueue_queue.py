"""Kueue's queueName (issue 22 item 6): the workload's kueue.x-k8s.io/queue-name label, else
``--queue``, else none and a warning on stderr."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: q, namespace: ns, uid: u1{labels}}}
spec:
  parallelism: 2
  template:
    spec:
      containers: [{{name: c, image: busybox}}]
"""


def _kli(kli: Callable[..., Any], tmp_path: Path, labels: str, *flags: str) -> Any:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(labels=labels))
    return kli("gang", "-f", str(path), "--backend", "kueue", *flags)


@pytest.mark.parametrize(
    ("labels", "flags", "queue"),
    [
        (", labels: {kueue.x-k8s.io/queue-name: lq}", (), "lq"),
        (", labels: {kueue.x-k8s.io/queue-name: lq}", ("--queue", "team"), "lq"),  # the label wins
        ("", ("--queue", "team"), "team"),
    ],
)
def test_queue_name(
    kli: Callable[..., Any], tmp_path: Path, labels: str, flags: tuple[str, ...], queue: str
) -> None:
    r = _kli(kli, tmp_path, labels, *flags)
    assert r.code == 0, r.err
    assert f"queueName: {queue}" in r.out
    assert "queue-name label" not in r.err


def test_no_queue_is_a_warning_on_stderr(kli: Callable[..., Any], tmp_path: Path) -> None:
    r = _kli(kli, tmp_path, "")
    assert r.code == 0, r.err
    assert "queueName" not in r.out
    assert "no kueue.x-k8s.io/queue-name label and no queue was given (--queue)" in r.err
