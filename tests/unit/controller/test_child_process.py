"""The admission child's plumbing (issue 21 item 6): the parent's /metrics merged with the child's,
the command line of the child (the parent's options), the ports line, and the supervision of a
child process (started, readiness polled, restarted with back-off, stopped with SIGTERM)."""

from __future__ import annotations

import io
import json
import logging
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from karta.controller.options import ADMISSION_ROLE, Options, parse, to_argv
from karta.controller.runtime.child import ChildPorts, ChildProcess, announce, parse_announcement
from karta.controller.runtime.logs import LOGGER_NAME, configure, logger
from karta.controller.runtime.metrics import Metrics, merge_families


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_merge_sums_samples_with_the_same_labels_and_keeps_one_family_per_name() -> None:
    parent, child = Metrics(), Metrics()
    parent.unbound_pods.labels(reason="escaped").inc(2)  # the parent's escaped-pods pass
    child.unbound_pods.labels(reason="escaped").inc(1)
    child.unbound_pods.labels(reason="timeout").inc(4)
    child.webhook_requests.labels(webhook="pods", outcome="patched").inc(7)
    for seconds in (0.002, 0.02, 0.2):
        child.webhook_latency.labels(webhook="pods").observe(seconds)
    parent.webhook_latency.labels(webhook="pods").observe(0.002)
    parent.leader.labels(name="karta-controller").set(1)
    parent.add_source(lambda: child.exposition().decode())

    text = parent.exposition().decode()
    samples = _samples(text)
    assert samples[("karta_unbound_pods_total", frozenset({("reason", "escaped")}))] == 3.0
    assert samples[("karta_unbound_pods_total", frozenset({("reason", "timeout")}))] == 4.0
    patched = frozenset({("webhook", "pods"), ("outcome", "patched")})
    assert samples[("karta_webhook_requests_total", patched)] == 7.0
    pods = frozenset({("webhook", "pods")})
    assert samples[("karta_webhook_latency_seconds_count", pods)] == 4.0
    assert samples[("karta_webhook_latency_seconds_bucket", pods | {("le", "0.0025")})] == 2.0
    assert samples[("karta_webhook_latency_seconds_sum", pods)] == pytest.approx(0.224)
    assert samples[("leader_election_master_status", frozenset({("name", "karta-controller")}))] == 1.0
    # Valid: one TYPE line per family and no sample name exposed by two families.
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types))
    keys = [
        (s.name, str(sorted(s.labels.items())))
        for f in text_string_to_metric_families(text)
        for s in f.samples
    ]
    assert len(keys) == len(set(keys)) == len(samples)


def test_merge_keeps_ours_when_a_family_has_another_type() -> None:
    parent = Metrics()
    parent.leader.labels(name="karta-controller").set(1)
    parent.webhook_requests.labels(webhook="pods", outcome="allowed").inc()
    theirs = textwrap.dedent(
        """\
        # TYPE leader_election_master_status counter
        leader_election_master_status{name="x"} 5.0
        # TYPE karta_webhook_requests_total counter
        karta_webhook_requests_total{outcome="allowed",webhook="pods"} 2.0
        # TYPE karta_webhook_requests_created gauge
        karta_webhook_requests_created{outcome="allowed",webhook="pods"} 1.0
        """
    )
    merged = {
        f.name: f for f in merge_families(parent.registry.collect(), text_string_to_metric_families(theirs))
    }
    assert merged["leader_election_master_status"].type == "gauge"
    assert [s.value for s in merged["leader_election_master_status"].samples] == [1.0]
    values = {s.name: s.value for s in merged["karta_webhook_requests"].samples}
    assert values["karta_webhook_requests_total"] == 3.0
    assert values["karta_webhook_requests_created"] > 1.0  # the parent's own; theirs dropped
    assert "karta_webhook_requests_created" not in merged


def test_a_failing_or_silent_source_never_costs_the_scrape_its_own_metrics() -> None:
    metrics = Metrics()
    metrics.leader.labels(name="karta-controller").set(1)
    own = metrics.exposition()

    def broken() -> str:
        raise RuntimeError("boom")

    metrics.add_source(broken)
    metrics.add_source(lambda: None)
    metrics.add_source(lambda: "this is { not an exposition")
    assert b'leader_election_master_status{name="karta-controller"} 1.0' in metrics.exposition()
    assert metrics.exposition().count(b"# TYPE") == own.count(b"# TYPE")


def test_the_child_command_line_reads_back_as_the_parent_options(tmp_path: Path) -> None:
    options = Options(
        kubeconfig=str(tmp_path / "kube config"),
        backend="volcano",
        namespaces=("a", "-b"),
        leader_elect=True,
        lease_duration=20.5,
        enable_webhook=True,
        webhook_port=9444,
        webhook_cert_dir=tmp_path / "certs",
        register_webhooks=True,
        cluster_definitions=False,
        definitions_dir=tmp_path / "defs",
        admission_process=False,
        role=ADMISSION_ROLE,
        ui=True,
    )
    assert parse(to_argv(options))[0] == options
    assert parse(to_argv(Options()))[0] == Options()
    assert "--role=admission" in to_argv(options)


def test_the_ports_line() -> None:
    out = io.StringIO()
    announce(ChildPorts(1234, 5678), out)
    assert parse_announcement(out.getvalue()) == ChildPorts(1234, 5678)
    for line in (
        "",
        "hello\n",
        "[]",
        '{"karta-child-ports": {"probes": 0, "metrics": 1}}',
        '{"karta-child-ports": 1}',
    ):
        assert parse_announcement(line) is None
    assert parse_announcement('{"karta-child-ports": {"probes": true, "metrics": 1}}') is None


def test_a_child_that_does_not_answer_its_metrics_costs_the_scrape_the_fetch_timeout_only() -> None:
    with socket.socket() as silent:  # accepts (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        child = ChildProcess("test", ["true"], metrics=Metrics(), fetch_timeout=0.2)
        child._ports = ChildPorts(port, port)
        began = time.monotonic()
        assert child.exposition() is None
        assert time.monotonic() - began < 1.0


_FAKE_CHILD = textwrap.dedent(
    """\
    import signal, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from pathlib import Path
    from karta.controller.runtime.child import ChildPorts, announce

    starts = Path(sys.argv[1])
    starts.write_text(starts.read_text() + "x" if starts.exists() else "x")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = b"ok"
            if self.path == "/metrics":
                body = b"# TYPE child_requests counter\\nchild_requests_total 3.0\\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    announce(ChildPorts(server.server_address[1], server.server_address[1]))
    if len(starts.read_text()) == 1:
        sys.exit(3)  # the first child dies at once
    server.serve_forever()
    """
)


def test_the_child_is_started_restarted_with_back_off_and_stopped(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(_FAKE_CHILD)
    metrics = Metrics()
    child = ChildProcess(
        "fake",
        [sys.executable, str(script), str(tmp_path / "starts")],
        metrics=metrics,
        backoff=(0.2, 1.0),
        poll=0.05,
    )
    metrics.add_source(child.exposition)
    stop = threading.Event()
    thread = threading.Thread(target=child.run, args=(stop,))
    thread.start()
    try:
        assert child.serving.wait(30)
        assert child.started == 2
        assert (tmp_path / "starts").read_text() == "xx"
        assert b'karta_child_process_restarts_total{name="fake"} 1.0' in metrics.exposition()
        assert b"child_requests_total 3.0" in metrics.exposition()
        pid = child.pid
        assert pid is not None
    finally:
        began = time.monotonic()
        stop.set()
        thread.join(30)
    assert time.monotonic() - began < 2.0
    assert not thread.is_alive() and child.pid is None and not child.serving.is_set()
    assert child.exposition() is None


def test_the_child_logs_say_which_process_wrote_them(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger(LOGGER_NAME)
    saved = (list(root.handlers), root.level, root.propagate)
    try:
        configure("json", "info", fields={"role": "admission"})
        logger("webhook").info("webhook server serving", extra={"address": "127.0.0.1:1"})
        configure("text", "info")
        logger("webhook").info("from the parent")
    finally:
        root.handlers[:], root.level, root.propagate = saved
    child, parent = capsys.readouterr().err.splitlines()
    assert json.loads(child)["role"] == "admission" and json.loads(child)["address"] == "127.0.0.1:1"
    assert "role=" not in parent
