"""A stand-in for the Ray dashboard HTTP API of every RayCluster's head pod, for KubeRay on kwok.

Why: KubeRay (v1.5.0) reads a RayJob's and a RayService's state from the Ray dashboard of the head
pod (``http://<head-svc>.<ns>.svc.cluster.local:8265``: the job submission API ``/api/jobs/`` and
Serve's ``/api/serve/applications/``) and probes the Serve proxy of the head pod
(``http://<pod-ip>:8000/-/healthz``). On kwok no Ray runs, so neither ever progresses.

How it is reached: the operator's dashboard and proxy clients are plain ``net/http`` clients with
the default transport (``utils.GetRayDashboardClientFunc``/``GetRayHttpProxyClientFunc`` without
``--use-kubernetes-proxy``), which honours ``HTTP_PROXY``. ``hack/cluster/controlplane.py`` starts
this server and the operator with ``HTTP_PROXY=http://127.0.0.1:<port>`` (the API server is
``https://127.0.0.1:…``: never proxied), so every dashboard request arrives here in absolute form
(``GET http://raycluster-a-head-svc.ns.svc.cluster.local:8265/api/jobs/ID``) and the host names the
cluster. Nothing in KubeRay is changed or configured differently.

What it implements: exactly what KubeRay calls. Jobs: submit (``POST /api/jobs/``; a used
``submission_id`` answers 500 "Please use a different submission_id" as Ray does), get (404 when
unknown), list, logs, stop, delete. Serve: ``GET /api/serve/applications/?api_type=declarative``
(``ServeDetails``) and ``PUT /api/serve/applications/`` (the config; an application that is new or
whose config changed goes to ``DEPLOYING``, applications left out of the config are removed).
Proxy health: ``GET /-/healthz`` answers ``success`` on any pod address unless made unhealthy.

State is per cluster (the host's ``<service>.<namespace>``). Nothing progresses by itself: a
submitted job stays ``PENDING`` and a deployed application ``DEPLOYING`` until a test moves it
through the control API, sent to the server directly (not as a proxy):

  GET  /raydash/state                                   every cluster's jobs, applications, config
  POST /raydash/jobs  {"namespace", "status", ["submission_id"], ["service"], ["message"]}
  POST /raydash/apps  {"namespace", "status", ["app"], ["service"], ["message"]}
  POST /raydash/reset {"namespace", ["service"]}       forget the jobs and applications (a new head)
  POST /raydash/proxy {"namespace", "healthy": bool, ["service"], ["pod_ips"]}  (the healthz of
                      the cluster's pods at these addresses; every other address is healthy)

``status`` is a Ray job status (PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED) or a Serve
application status (NOT_STARTED, DEPLOYING, RUNNING, DEPLOY_FAILED, DELETING, UNHEALTHY); the
optional fields narrow which jobs/applications change (all of the namespace otherwise); the answer
lists what changed (an empty match is a 404, so a test never waits on a typo). ``RayDash`` below is
the client the tests use.

Standard library only. Run ``python3 raydash.py --port 0``: it prints ``port <n>`` once listening.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

JOB_STATUSES = ("PENDING", "RUNNING", "SUCCEEDED", "FAILED", "STOPPED")
JOB_TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
JOB_MESSAGES = {  # what Ray's job manager writes for each status
    "PENDING": "Job has not started yet.",
    "RUNNING": "Job is currently running.",
    "SUCCEEDED": "Job finished successfully.",
    "FAILED": "Job entrypoint command failed with exit code 1.",
    "STOPPED": "Job was intentionally stopped.",
}
APP_STATUSES = ("NOT_STARTED", "DEPLOYING", "RUNNING", "DEPLOY_FAILED", "DELETING", "UNHEALTHY")
# The deployments' status that goes with an application status (Ray Serve's DeploymentStatus).
DEPLOYMENT_STATUS = {
    "NOT_STARTED": "UPDATING",
    "DEPLOYING": "UPDATING",
    "RUNNING": "HEALTHY",
    "DEPLOY_FAILED": "DEPLOY_FAILED",
    "DELETING": "UPDATING",
    "UNHEALTHY": "UNHEALTHY",
}


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Cluster:
    """One head pod's dashboard: its jobs (by submission id) and Serve applications (by name)."""

    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    apps: dict[str, dict[str, Any]] = field(default_factory=dict)
    app_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    proxy_healthy: bool = True


class Dashboards:
    """Every cluster's state, keyed by ``<service>.<namespace>``; all access under one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.clusters: dict[str, Cluster] = {}
        self.pod_ips: dict[str, str] = {}  # proxy probes: pod address -> cluster key (unknown: healthy)

    def cluster(self, key: str) -> Cluster:
        return self.clusters.setdefault(key, Cluster())

    def matching(self, namespace: str, service: str | None) -> list[tuple[str, Cluster]]:
        return [
            (key, c)
            for key, c in sorted(self.clusters.items())
            if key.split(".", 1)[1:] == [namespace] and (service is None or key.split(".", 1)[0] == service)
        ]


def cluster_key(host: str) -> str | None:
    """``a-head-svc.ns.svc.cluster.local:8265`` -> ``a-head-svc.ns``; None for an address."""
    name = host.rsplit(":", 1)[0]
    labels = name.split(".")
    if len(labels) < 3 or labels[2] != "svc":
        return None
    return f"{labels[0]}.{labels[1]}"


class Handler(BaseHTTPRequestHandler):
    server: RayDashServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write(f"raydash: {self.requestline} -> {args[1] if len(args) > 1 else ''}\n")

    # -- plumbing -----------------------------------------------------------------------------
    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        return json.loads(raw)

    def _send(self, code: int, payload: Any) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        host = parts.netloc or self.headers.get("Host", "")
        path = parts.path
        try:
            body = self._body() if method in ("POST", "PUT") else None
        except ValueError as exc:
            self._send(400, f"invalid JSON body: {exc}")
            return
        try:
            if not parts.netloc and path.startswith("/raydash/"):
                code, payload = self._control(method, path, body)
            elif path == "/-/healthz":
                code, payload = self._healthz(host)
            else:
                key = cluster_key(host)
                if key is None:
                    code, payload = 404, f"no Ray dashboard at {host}"
                else:
                    with self.server.state.lock:
                        code, payload = self._dashboard(self.server.state.cluster(key), method, path, body)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            code, payload = 400, f"bad request: {exc!r}"
        self._send(code, payload)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # -- the Ray dashboard --------------------------------------------------------------------
    def _dashboard(self, c: Cluster, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path.rstrip("/") == "/api/jobs":
            if method == "GET":
                return 200, list(c.jobs.values())
            if method == "POST":
                return self._submit(c, body)
        elif path.startswith("/api/jobs/"):
            rest = path.removeprefix("/api/jobs/").strip("/").split("/")
            job = c.jobs.get(rest[0])
            if job is None:
                return 404, f"Job {rest[0]} does not exist"
            if method == "GET" and len(rest) == 1:
                return 200, job
            if method == "GET" and rest[1:] == ["logs"]:
                return 200, {"logs": ""}
            if method == "POST" and rest[1:] == ["stop"]:
                if job["status"] in JOB_TERMINAL:
                    return 200, {"stopped": False}
                _set_job(job, "STOPPED", None)
                return 200, {"stopped": True}
            if method == "DELETE" and len(rest) == 1:
                if job["status"] not in JOB_TERMINAL:
                    return 400, f"Attempted to delete job {rest[0]} in a non-terminal state"
                del c.jobs[rest[0]]
                return 200, {"deleted": True}
        elif path.rstrip("/") == "/api/serve/applications":
            if method == "GET":
                return 200, {
                    "deploy_mode": "MULTI_APP",
                    "applications": {name: dict(app) for name, app in c.apps.items()},
                }
            if method == "PUT":
                return self._deploy(c, body)
        return 404, f"{method} {path} is not served by the Ray dashboard stand-in"

    def _submit(self, c: Cluster, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("entrypoint"), str):
            return 400, "the job submission needs an entrypoint"
        sid = body.get("submission_id") or f"raysubmit_{len(c.jobs) + 1:016d}"
        if sid in c.jobs:
            return 500, f"Job with submission_id {sid} already exists. Please use a different submission_id."
        c.jobs[sid] = {
            "job_id": f"{len(c.jobs) + 1:02d}000000",
            "submission_id": sid,
            "entrypoint": body["entrypoint"],
            "status": "PENDING",
            "message": JOB_MESSAGES["PENDING"],
            "metadata": body.get("metadata") or {},
            "runtime_env": body.get("runtime_env") or {},
            "start_time": _now_ms(),
        }
        return 200, {"job_id": sid, "submission_id": sid}

    def _deploy(self, c: Cluster, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("applications"), list):
            return 400, "the Serve config needs an applications list"
        names = []
        for app in body["applications"]:
            name = app.get("name", "default")
            names.append(name)
            if c.app_configs.get(name) == app:
                continue
            c.app_configs[name] = app
            deployments = [d.get("name") for d in app.get("deployments") or [] if d.get("name")]
            c.apps[name] = {
                "name": name,
                "route_prefix": app.get("route_prefix", "/"),
                "docs_path": None,
                "status": "DEPLOYING",
                "message": "",
                "deployments": {
                    d: {"name": d, "status": "UPDATING", "message": ""} for d in deployments or [name]
                },
            }
        for gone in set(c.apps) - set(names):
            del c.apps[gone]
            c.app_configs.pop(gone, None)
        return 200, ""

    def _healthz(self, host: str) -> tuple[int, Any]:
        with self.server.state.lock:
            key = self.server.state.pod_ips.get(host.rsplit(":", 1)[0])
            healthy = key is None or self.server.state.cluster(key).proxy_healthy
        return (200, "success") if healthy else (503, "This node is being drained.")

    # -- the control API ----------------------------------------------------------------------
    def _control(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        state = self.server.state
        if method == "GET" and path == "/raydash/state":
            with state.lock:
                return 200, {
                    key: {"jobs": c.jobs, "apps": c.apps, "proxy_healthy": c.proxy_healthy}
                    for key, c in state.clusters.items()
                }
        if method != "POST" or not isinstance(body, dict) or not isinstance(body.get("namespace"), str):
            return 400, f"{method} {path}: expected POST with a JSON object naming the namespace"
        namespace, service = body["namespace"], body.get("service")
        with state.lock:
            clusters = state.matching(namespace, service)
            if path == "/raydash/jobs":
                return self._control_jobs(clusters, body)
            if path == "/raydash/apps":
                return self._control_apps(clusters, body)
            if path == "/raydash/reset":  # the head pod died: its Ray cluster starts empty again
                for key, _ in clusters:
                    state.clusters[key] = Cluster()
                return (200, [k for k, _ in clusters]) if clusters else (404, "no such cluster")
            if path == "/raydash/proxy":
                for _, c in clusters:
                    c.proxy_healthy = bool(body.get("healthy"))
                for ip in body.get("pod_ips") or []:
                    for key, _ in clusters[:1]:
                        state.pod_ips[ip] = key
                return (200, [k for k, _ in clusters]) if clusters else (404, "no such cluster")
        return 404, f"unknown control path {path}"

    def _control_jobs(self, clusters: list[tuple[str, Cluster]], body: dict[str, Any]) -> tuple[int, Any]:
        status = body.get("status")
        if status not in JOB_STATUSES:
            return 400, f"job status {status!r} is not one of {', '.join(JOB_STATUSES)}"
        changed = []
        for key, c in clusters:
            for sid, job in c.jobs.items():
                if body.get("submission_id") in (None, sid):
                    _set_job(job, status, body.get("message"))
                    changed.append(f"{key}/{sid}")
        return (200, changed) if changed else (404, "no matching job")

    def _control_apps(self, clusters: list[tuple[str, Cluster]], body: dict[str, Any]) -> tuple[int, Any]:
        status = body.get("status")
        if status not in APP_STATUSES:
            return 400, f"application status {status!r} is not one of {', '.join(APP_STATUSES)}"
        changed = []
        for key, c in clusters:
            for name, app in c.apps.items():
                if body.get("app") in (None, name):
                    app["status"] = status
                    app["message"] = body.get("message") or ""
                    for d in app["deployments"].values():
                        d["status"] = DEPLOYMENT_STATUS[status]
                        d["message"] = body.get("message") or ""
                    changed.append(f"{key}/{name}")
        return (200, changed) if changed else (404, "no matching application")


def _set_job(job: dict[str, Any], status: str, message: str | None) -> None:
    job["status"] = status
    job["message"] = message or JOB_MESSAGES[status]
    if status in JOB_TERMINAL:
        job["end_time"] = _now_ms()
    else:
        job.pop("end_time", None)


class RayDashServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, verbose: bool = False) -> None:
        super().__init__(address, Handler)
        self.state = Dashboards()
        self.verbose = verbose


class RayDash:
    """The control API's client: ``RayDash("http://127.0.0.1:PORT").set_job(ns, "RUNNING")``."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def _call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path, data=data, method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise LookupError(
                f"raydash {path}: HTTP {exc.code}: {exc.read().decode(errors='replace')}"
            ) from exc

    def submit(self, dashboard: str, submission_id: str, entrypoint: str) -> dict[str, Any]:
        """What ``ray job submit`` in a K8sJobMode submitter pod does: POST the job to the dashboard
        ``dashboard`` (``<head-svc>.<ns>.svc.cluster.local:8265``, as RayJob status.dashboardURL),
        sent through the stand-in as KubeRay's own requests are."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": self.url}))
        body = json.dumps({"entrypoint": entrypoint, "submission_id": submission_id}).encode()
        req = urllib.request.Request(
            f"http://{dashboard}/api/jobs/", data=body, method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with opener.open(req, timeout=10) as resp:
                answer: dict[str, Any] = json.loads(resp.read())
                return answer
        except urllib.error.HTTPError as exc:
            raise LookupError(
                f"raydash submit: HTTP {exc.code}: {exc.read().decode(errors='replace')}"
            ) from exc

    def state(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("/raydash/state")
        return result

    def set_job(
        self, namespace: str, status: str, *, submission_id: str | None = None, message: str | None = None
    ) -> list[str]:
        body = {"namespace": namespace, "status": status, "submission_id": submission_id, "message": message}
        return list(self._call("/raydash/jobs", {k: v for k, v in body.items() if v is not None}))

    def reset(self, namespace: str, *, service: str | None = None) -> list[str]:
        body = {"namespace": namespace, "service": service}
        return list(self._call("/raydash/reset", {k: v for k, v in body.items() if v is not None}))

    def set_app(
        self,
        namespace: str,
        status: str,
        *,
        app: str | None = None,
        service: str | None = None,
        message: str | None = None,
    ) -> list[str]:
        body = {"namespace": namespace, "status": status, "app": app, "service": service, "message": message}
        return list(self._call("/raydash/apps", {k: v for k, v in body.items() if v is not None}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    ns = parser.parse_args(argv)
    server = RayDashServer(("127.0.0.1", ns.port), verbose=ns.verbose)
    print(f"port {server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
