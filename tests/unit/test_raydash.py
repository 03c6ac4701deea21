"""hack/raydash: the Ray dashboard stand-in answers KubeRay's calls as an HTTP proxy would receive
them (absolute-form request lines naming the head service), keeps each cluster apart, and moves
jobs and Serve applications only when the control API says so. The live check (KubeRay itself
driving a RayJob and a RayService through it) is tests/e2e/test_raydash_live.py."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "hack" / "raydash" / "raydash.py"
HEAD_A = "http://a-head-svc.ns1.svc.cluster.local:8265"
HEAD_B = "http://b-head-svc.ns2.svc.cluster.local:8265"


def _module() -> ModuleType:
    name = "karta_hack_raydash_raydash"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def server() -> Iterator[str]:
    srv = _module().RayDashServer(("127.0.0.1", 0))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _via_proxy(proxy: str, method: str, url: str, body: Any = None) -> tuple[int, Any]:
    """A request the way net/http sends it through HTTP_PROXY."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with opener.open(req, timeout=5) as resp:
            raw = resp.read()
            code = resp.status
    except urllib.error.HTTPError as exc:
        raw, code = exc.read(), exc.code
    try:
        return code, json.loads(raw)
    except ValueError:
        return code, raw.decode()


def test_jobs_are_per_cluster_and_move_only_on_command(server: str) -> None:
    code, body = _via_proxy(
        server, "POST", HEAD_A + "/api/jobs/", {"entrypoint": "python x.py", "submission_id": "j1"}
    )
    assert (code, body) == (200, {"job_id": "j1", "submission_id": "j1"})
    code, body = _via_proxy(
        server, "POST", HEAD_A + "/api/jobs/", {"entrypoint": "python x.py", "submission_id": "j1"}
    )
    assert code == 500 and "Please use a different submission_id" in body  # what KubeRay matches on
    assert _via_proxy(server, "GET", HEAD_B + "/api/jobs/j1")[0] == 404  # another cluster: unknown
    code, info = _via_proxy(server, "GET", HEAD_A + "/api/jobs/j1")
    assert code == 200 and info["status"] == "PENDING" and info["submission_id"] == "j1"

    control = _module().RayDash(server)
    assert control.set_job("ns1", "RUNNING", submission_id="j1") == ["a-head-svc.ns1/j1"]
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/j1")[1]["status"] == "RUNNING"
    with pytest.raises(LookupError, match="no matching job"):
        control.set_job("ns2", "RUNNING")
    with pytest.raises(LookupError, match="not one of"):
        control.set_job("ns1", "DONE")

    assert _via_proxy(server, "DELETE", HEAD_A + "/api/jobs/j1")[0] == 400  # not terminal yet
    assert _via_proxy(server, "POST", HEAD_A + "/api/jobs/j1/stop") == (200, {"stopped": True})
    code, info = _via_proxy(server, "GET", HEAD_A + "/api/jobs/j1")
    assert info["status"] == "STOPPED" and info["end_time"] >= info["start_time"]
    assert _via_proxy(server, "POST", HEAD_A + "/api/jobs/j1/stop") == (200, {"stopped": False})
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/") == (200, [info])
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/j1/logs") == (200, {"logs": ""})
    assert _via_proxy(server, "DELETE", HEAD_A + "/api/jobs/j1")[0] == 200
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/j1")[0] == 404
    _via_proxy(server, "POST", HEAD_A + "/api/jobs/", {"entrypoint": "python x.py", "submission_id": "j2"})
    assert control.reset("ns1", service="a-head-svc") == ["a-head-svc.ns1"]  # a new head pod: empty
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/j2")[0] == 404
    # A K8sJobMode submitter's `ray job submit`, played by a flow through the same proxy path.
    dashboard = HEAD_A.removeprefix("http://")
    assert control.submit(dashboard, "j3", "python y.py") == {"job_id": "j3", "submission_id": "j3"}
    assert _via_proxy(server, "GET", HEAD_A + "/api/jobs/j3")[1]["entrypoint"] == "python y.py"
    with pytest.raises(LookupError, match="different submission_id"):
        control.submit(dashboard, "j3", "python y.py")


def test_serve_applications_follow_the_config_and_the_control_api(server: str) -> None:
    details = HEAD_A + "/api/serve/applications/?api_type=declarative"
    assert _via_proxy(server, "GET", details) == (200, {"deploy_mode": "MULTI_APP", "applications": {}})
    config = {"applications": [{"name": "app1", "route_prefix": "/a", "deployments": [{"name": "D"}]}]}
    assert _via_proxy(server, "PUT", HEAD_A + "/api/serve/applications/", config)[0] == 200
    app = _via_proxy(server, "GET", details)[1]["applications"]["app1"]
    assert app["status"] == "DEPLOYING" and app["deployments"]["D"]["status"] == "UPDATING"

    control = _module().RayDash(server)
    assert control.set_app("ns1", "RUNNING", app="app1") == ["a-head-svc.ns1/app1"]
    # The same config again (KubeRay re-sends it) keeps the status; a changed one redeploys.
    assert _via_proxy(server, "PUT", HEAD_A + "/api/serve/applications/", config)[0] == 200
    app = _via_proxy(server, "GET", details)[1]["applications"]["app1"]
    assert app["status"] == "RUNNING" and app["deployments"]["D"]["status"] == "HEALTHY"
    control.set_app("ns1", "UNHEALTHY", message="replica died")
    app = _via_proxy(server, "GET", details)[1]["applications"]["app1"]
    assert (app["status"], app["message"], app["deployments"]["D"]["status"]) == (
        "UNHEALTHY",
        "replica died",
        "UNHEALTHY",
    )
    config["applications"][0]["route_prefix"] = "/b"
    _via_proxy(server, "PUT", HEAD_A + "/api/serve/applications/", config)
    assert _via_proxy(server, "GET", details)[1]["applications"]["app1"]["status"] == "DEPLOYING"
    _via_proxy(server, "PUT", HEAD_A + "/api/serve/applications/", {"applications": []})
    assert _via_proxy(server, "GET", details)[1]["applications"] == {}


def test_proxy_health_and_what_is_not_served(server: str) -> None:
    assert _via_proxy(server, "GET", "http://10.244.0.7:8000/-/healthz") == (200, "success")
    code, body = _via_proxy(server, "GET", HEAD_A + "/api/version")
    assert code == 404 and "not served" in body
    assert _via_proxy(server, "GET", "http://10.244.0.7:8265/api/jobs/")[0] == 404  # no cluster there
    code, body = _via_proxy(server, "POST", HEAD_A + "/api/jobs/", {"no": "entrypoint"})
    assert code == 400 and "entrypoint" in body
