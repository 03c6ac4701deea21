"""A real, local Kubernetes control plane for the test suite.

Owns: building-or-reusing the pinned binaries (via ``build.sh``), a throw-away PKI made with the
``openssl`` command (CA, apiserver serving certificate, admin client certificate, service-account
signing key, the aggregation layer's front-proxy CA and client certificate), starting etcd and
kube-apiserver (its aggregation layer on: requestheader and proxy-client flags, aggregator routing
to endpoints since no kube-proxy runs) (and optionally kube-controller-manager and
kube-scheduler) on 127.0.0.1 only with free ports, an admin kubeconfig, the ``/readyz`` wait, and
a clean teardown (process groups killed, work directory removed; ``down`` keeps the logs in
``<dir>-logs``).

With ``--kwok`` it also runs kwok (``hack/kwok``: the kubelet of fake Nodes, pods moved through
the Stages of ``hack/kwok/stages.yaml``), and with ``--operators kuberay,training`` the KubeRay
operator and the Kubeflow training operator (``hack/kuberay``, ``hack/training-operator``) as
local processes against the admin kubeconfig, after their CRDs (from the same Go module versions,
applied with the pinned kubectl of ``hack/kubectl``) are established. KubeRay comes with
``hack/raydash/raydash.py``, the stand-in for the Ray dashboard of every head pod (no Ray runs on
kwok): the operator's ``HTTP_PROXY`` points at it, its control API is ``raydash_url``.

With ``--kueue`` it runs Kueue's controller manager (``hack/kueue``) with a given Configuration
(``up.sh`` generates it with ``python -m karta.kueue.config``): its CRDs, its webhook
configurations and the CRD conversion webhooks with ``clientConfig.url`` on loopback TLS (a serving
certificate from the test CA), its internal certificate management and leader election off, its
probes and metrics on free loopback ports (``start_kueue``), and its visibility API (the queue
positions) behind the aggregation layer: its server on this machine's non-loopback address
(``host_address``), a Service with an EndpointSlice naming it (without such an address: on
127.0.0.1 behind an ExternalName Service, aggregator routing off), and the APIServices of
``visibility.kueue.x-k8s.io`` (``_register_kueue_visibility``; docs/kueue.md section 11).

Standard library only, so that ``up.sh``/``down.sh`` and the pytest fixture in ``tests/e2e`` can
both use it without the project's virtualenv. Run ``python3 controlplane.py --help``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import ipaddress
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HACK = HERE.parent
BUILD_SCRIPT = HERE / "build.sh"
BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd")
CORE = ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd")  # stop order
# Nodes kwok plays the kubelet for carry this annotation (hack/fake_nodes.py --kwok).
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
# The training operator's webhook server needs a serving certificate in this fixed directory
# (its cert rotator writes it into a Secret that a kubelet would mount there).
TRAINING_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
TRAINING_NAMESPACE = "karta-training-operator"
# Kueue (internalCertManagement off) reads its metrics serving certificate from this fixed
# directory (cmd/kueue/main.go: a Secret a kubelet would mount there); any valid pair serves.
KUEUE_METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
# Kueue's visibility API server (internalCertManagement off) reads its serving certificate from
# this fixed directory (pkg/visibility/server.go); its APIServices skip TLS verification (as its
# own install's do), so any valid pair serves.
KUEUE_VISIBILITY_CERT_DIR = Path("/visibility")
KUEUE_VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
KUEUE_VISIBILITY_VERSIONS = ("v1beta2", "v1beta1")  # pkg/visibility/server.go install()
KUEUE_VISIBILITY_SERVICE = "kueue-visibility-server"
# The address Kueue's visibility server listens on and its EndpointSlice names, instead of the
# one host_address() finds.
HOST_ADDRESS_ENV = "KARTA_CLUSTER_HOST_ADDRESS"
# Names as Kueue's config/default kustomization makes them (namePrefix "kueue-").
KUEUE_WEBHOOK_NAMES = {
    "MutatingWebhookConfiguration": "kueue-mutating-webhook-configuration",
    "ValidatingWebhookConfiguration": "kueue-validating-webhook-configuration",
}
# The webhooks config/components/webhook/kustomization.yaml limits to namespaces other than
# kube-system and Kueue's own.
KUEUE_NAMESPACED_WEBHOOKS = ("mpod.kb.io", "mdeployment.kb.io", "mstatefulset.kb.io",
                             "vpod.kb.io", "vdeployment.kb.io", "vstatefulset.kb.io")  # fmt: skip
# Kueue's built-in frameworks the test cluster keeps with Kueue even though a catalog definition
# covers the kind (up.sh --kueue): batch/v1 Jobs take Kueue's own path, next to karta's.
KUEUE_NATIVE = ("batch/job",)


@dataclass(frozen=True)
class Addon:
    """A process of the ecosystem built from its own Go module in ``hack/<directory>``."""

    name: str  # the --operators name (kwok: --kwok), and the component (log) name
    directory: str
    module: str  # the upstream module go.mod pins (its CRDs are read from that version)
    binary: str
    crd_dirs: tuple[str, ...] = ()  # under the module's directory in the Go module cache


ADDONS: Mapping[str, Addon] = {
    addon.name: addon
    for addon in (
        Addon("kwok", "kwok", "sigs.k8s.io/kwok", "kwok"),
        Addon(
            "kuberay", "kuberay", "github.com/ray-project/kuberay/ray-operator", "ray-operator",
            ("config/crd/bases",),
        ),
        Addon(
            "training", "training-operator", "github.com/kubeflow/training-operator",
            "training-operator.v1", ("manifests/base/crds",),
        ),
        Addon("kueue", "kueue", "sigs.k8s.io/kueue", "kueue", ("config/components/crd/bases",)),
    )
}  # fmt: skip
OPERATORS = ("kuberay", "training")

# The Workload/PodGroup API (scheduling.k8s.io/v1beta1) is beta in 1.37 and off by default.
DEFAULT_FEATURE_GATES: Mapping[str, bool] = {"GenericWorkload": True}
DEFAULT_RUNTIME_CONFIG: tuple[str, ...] = ("scheduling.k8s.io/v1beta1=true",)
# Virtual service IPs only: nothing here ever sends traffic to them.
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
STATE_FILE = "state.json"
# The common name of the client certificate the API server's aggregation layer presents
# (--proxy-client-cert-file), the only one --requestheader-allowed-names accepts.
FRONT_PROXY_CLIENT = "front-proxy-client"


class ControlPlaneError(RuntimeError):
    """The control plane could not be built, started or reached."""


def _looks_like_error(line: str) -> bool:
    """A log line at error level in the formats the components use (klog's ``E1206``,
    controller-runtime's tab-separated ``ERROR``, etcd's JSON ``"level":"error"``)."""
    return (
        line.startswith(("E0", "E1", "F0", "F1"))
        or "\tERROR\t" in line
        or '"level":"error"' in line
        or '"level":"fatal"' in line
        or "address already in use" in line
    )


class PortInUseError(ControlPlaneError):
    """A component lost the race for the free port it was given (start-up retries with new ports)."""


def pinned_versions() -> dict[str, str]:
    """``{"kubernetes": "v1.37.2", "etcd": "v3.7.0"}`` as pinned by ``go.mod``."""
    wanted = {"k8s.io/kubernetes": "kubernetes", "go.etcd.io/etcd/server/v3": "etcd"}
    found: dict[str, str] = {}
    for line in (HERE / "go.mod").read_text().splitlines():
        words = line.split()
        if words[:1] == ["require"]:
            words = words[1:]
        if len(words) >= 2 and words[0] in wanted and words[1].startswith("v"):
            found.setdefault(wanted[words[0]], words[1])
    return found


def build_binaries(*, force: bool = False) -> Path:
    """Build (or reuse from the cache) the pinned binaries; return their directory."""
    env = dict(os.environ)
    if force:
        env["KARTA_CLUSTER_FORCE"] = "1"
    proc = subprocess.run(
        ["bash", str(BUILD_SCRIPT)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=None,  # build progress goes straight to the caller's stderr
        text=True,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise ControlPlaneError(f"hack/cluster/build.sh failed with exit code {proc.returncode}")
    bin_dir = Path(lines[-1])
    missing = [b for b in BINARIES if not (bin_dir / b).is_file()]
    if missing:
        raise ControlPlaneError(f"build.sh reported {bin_dir} but it lacks {', '.join(missing)}")
    return bin_dir


def _run_build(script: Path, what: str) -> Path:
    proc = subprocess.run(["bash", str(script)], stdout=subprocess.PIPE, stderr=None, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise ControlPlaneError(f"{what} failed with exit code {proc.returncode}")
    return Path(lines[-1])


def build_addon(name: str) -> Path:
    """Build (or reuse from the cache) the binary of ``ADDONS[name]``; return its path."""
    addon = ADDONS[name]
    script = f"hack/{addon.directory}/build.sh"
    binary = _run_build(HACK / addon.directory / "build.sh", script) / addon.binary
    if not binary.is_file():
        raise ControlPlaneError(f"{script} did not produce {binary}")
    return binary


def build_kubectl() -> Path:
    """The pinned kubectl (hack/kubectl), built or reused."""
    return _run_build(HACK / "kubectl" / "build.sh", "hack/kubectl/build.sh") / "kubectl"


def addon_crds(name: str) -> list[Path]:
    """The CRD directories of ``ADDONS[name]`` at the version its go.mod pins, found in the Go
    module cache (``go mod download -json``: the module is already there once it is built)."""
    addon = ADDONS[name]
    if not addon.crd_dirs:
        return []
    module_dir = addon_module_dir(name)
    return [module_dir / crd_dir for crd_dir in addon.crd_dirs]


def addon_module_dir(name: str) -> Path:
    """The source of the module ``ADDONS[name]`` pins, in the Go module cache."""
    addon = ADDONS[name]
    proc = subprocess.run(
        ["go", "mod", "download", "-json", addon.module],
        cwd=HACK / addon.directory,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return Path(json.loads(proc.stdout)["Dir"])
    except (ValueError, KeyError) as exc:
        raise ControlPlaneError(f"go mod download {addon.module} failed: {proc.stderr.strip()}") from exc


def _json_stream(text: str) -> list[dict[str, Any]]:
    """The JSON documents of ``text``, one after the other (``kubectl -o json`` on several files)."""
    decoder = json.JSONDecoder()
    documents: list[dict[str, Any]] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index == len(text):
            return documents
        document, index = decoder.raw_decode(text, index)
        documents.append(document)


def generated_kueue_config(native: Sequence[str] = KUEUE_NATIVE) -> dict[str, object]:
    """The Kueue Configuration of karta's built-in catalog (``python -m karta.kueue.config``), run
    with the repository's virtualenv when there is one (this script needs no package of its own)."""
    repo = HACK.parent
    venv_python = repo / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.is_file() else sys.executable
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo / "src"), env.get("PYTHONPATH")]))
    args = [python, "-m", "karta.kueue.config", *(f"--native={n}" for n in native)]
    proc = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ControlPlaneError(
            f"python -m karta.kueue.config failed (karta installed? pip install -e . in {repo}/.venv):\n"
            f"{proc.stderr.strip()[-2000:]}"
        )
    config: dict[str, object] = json.loads(proc.stdout)
    return config


def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that is free right now, chosen below the kernel's ephemeral range:
    a port from that range (what binding port 0 gives) can be taken, between this check and the
    component's own bind, by any outgoing connection on the machine (the components' own clients
    included), and the component then exits with "address already in use"."""
    floor = _ephemeral_floor()
    low = 10000 if floor > 12000 else 1024
    high = floor - 1 if floor > 12000 else 65535
    rng = random.SystemRandom()
    for _ in range(64):
        candidate = rng.randint(low, high)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, candidate))
            except OSError:
                continue
            return candidate
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _routable(address: str) -> bool:
    """An IPv4 address an Endpoint(Slice) may name: not loopback, link-local, unspecified or
    multicast (the API server's ValidateEndpointIP)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.version == 4 and not (
        ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast
    )


def host_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (an EndpointSlice may not name
    127.0.0.1, and without kube-proxy the aggregation layer routes to the endpoint itself):
    ``$KARTA_CLUSTER_HOST_ADDRESS`` when set, else the source address of the default route (a UDP
    socket "connected" to a documentation address: no packet is sent), else one the host name
    resolves to; None when there is none (a container without a network) or the variable is
    ``none``."""
    override = os.environ.get(HOST_ADDRESS_ENV, "").strip()
    if override == "none":
        return None
    if override:
        if not _routable(override):
            raise ControlPlaneError(f"{HOST_ADDRESS_ENV}={override}: not a non-loopback IPv4 address")
        return override
    candidates: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("203.0.113.1", 9))
        candidates.append(str(sock.getsockname()[0]))
    with contextlib.suppress(OSError):
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        candidates += [str(info[4][0]) for info in infos]
    for candidate in candidates:
        if not _routable(candidate):
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((candidate, 0))  # an address of this machine
            except OSError:
                continue
        return candidate
    return None


# ---------------------------------------------------------------------------------------- PKI


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ControlPlaneError(f"openssl {' '.join(args[:2])} failed: {proc.stderr.strip()}")


def _ec_key(name: str, *, cwd: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name, cwd=cwd)


def _signed_cert(name: str, *, subject: str, extensions: str, cwd: Path, ca: str = "ca") -> None:
    """``name.key`` + ``name.crt`` signed by ``<ca>.crt`` with the given X.509v3 extensions."""
    _ec_key(f"{name}.key", cwd=cwd)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr", cwd=cwd)
    # Key identifiers too: strict verifiers (e.g. Python 3.13's default context) require them.
    extensions += "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n"
    (cwd / f"{name}.ext").write_text(extensions)
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
        "-days", "3650", "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.crt",
        cwd=cwd,
    )  # fmt: skip


def _ca(name: str, *, subject: str, cwd: Path) -> None:
    """A self-signed CA, ``name.key`` + ``name.crt``."""
    _ec_key(f"{name}.key", cwd=cwd)
    _openssl(
        "req", "-x509", "-new", "-key", f"{name}.key", "-subj", subject, "-days", "3650",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "-out", f"{name}.crt",
        cwd=cwd,
    )  # fmt: skip


def generate_pki(pki: Path) -> None:
    """CA, apiserver serving cert, admin client cert (system:masters), service-account key pair,
    and the aggregation layer's front-proxy CA and client certificate (the API server presents it
    to aggregated API servers, which trust the CA through the ``extension-apiserver-authentication``
    ConfigMap the API server publishes, as kubeadm's ``front-proxy-*`` files)."""
    pki.mkdir(parents=True, exist_ok=True)
    _ca("ca", subject="/CN=karta-test-ca", cwd=pki)
    _ca("front-proxy-ca", subject="/CN=karta-test-front-proxy-ca", cwd=pki)
    _signed_cert(
        "front-proxy-client",
        subject=f"/CN={FRONT_PROXY_CLIENT}",
        extensions="basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=clientAuth\n",
        cwd=pki,
        ca="front-proxy-ca",
    )
    sans = ",".join(
        [
            "IP:127.0.0.1",
            "IP:10.0.0.1",
            "DNS:localhost",
            "DNS:kubernetes",
            "DNS:kubernetes.default",
            "DNS:kubernetes.default.svc",
            "DNS:kubernetes.default.svc.cluster.local",
        ]
    )
    _signed_cert(
        "apiserver",
        subject="/CN=kube-apiserver",
        extensions=(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\n"
            f"subjectAltName={sans}\n"
        ),
        cwd=pki,
    )
    _signed_cert(
        "admin",
        subject="/O=system:masters/CN=karta-admin",
        extensions="basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=clientAuth\n",
        cwd=pki,
    )
    _ec_key("sa.key", cwd=pki)
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def write_kubeconfig(path: Path, *, server: str, pki: Path) -> None:
    """An admin kubeconfig with everything embedded (context ``karta-test``)."""

    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "karta-test", "cluster": {"server": server, "certificate-authority-data": b64("ca.crt")}}
        ],
        "users": [
            {
                "name": "karta-admin",
                "user": {"client-certificate-data": b64("admin.crt"), "client-key-data": b64("admin.key")},
            }
        ],
        "contexts": [
            {
                "name": "karta-test",
                "context": {"cluster": "karta-test", "user": "karta-admin", "namespace": "default"},
            }
        ],
        "current-context": "karta-test",
        "preferences": {},
    }
    # JSON is valid YAML, and every kubeconfig loader accepts it.
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)


# ------------------------------------------------------------------------------ the processes


@dataclass
class ControlPlaneConfig:
    """What to start. ``bin_dir`` holds the binaries of ``build_binaries``."""

    bin_dir: Path
    feature_gates: Mapping[str, bool] = field(default_factory=lambda: dict(DEFAULT_FEATURE_GATES))
    runtime_config: Sequence[str] = DEFAULT_RUNTIME_CONFIG
    controllers: bool = False  # also start kube-controller-manager and kube-scheduler
    extra_apiserver_args: Sequence[str] = ()
    ready_timeout: float = 120.0
    gomaxprocs: int = 2
    # Linux: the components get SIGKILL when the process that started them dies (a killed
    # pytest leaves nothing behind). up.sh turns this off: its processes outlive it.
    die_with_parent: bool = True
    start_attempts: int = 3  # new free ports when a component loses its port to someone else
    kwok: bool = False  # also run kwok (needs controllers for kube-scheduler to bind pods)
    operators: Sequence[str] = ()  # names in OPERATORS, started after their CRDs
    # The StatefulSet controller too (off by default: the LWS tests play it; the recorder needs it).
    statefulset_controller: bool = False
    # Kueue's controller manager with this Configuration (karta.kueue.config: its integrations and
    # namespace; ports, certificates and leader election are set here); None: no Kueue.
    kueue: Mapping[str, Any] | None = None


def _die_with_parent() -> None:
    """In the child before exec: ask Linux for SIGKILL when the parent goes away."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _gates(gates: Mapping[str, bool]) -> str:
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))


class ControlPlane:
    """etcd + kube-apiserver (+ controller-manager and scheduler) in ``workdir``.

    Use as a context manager, or ``start()``/``stop()``. ``stop()`` removes ``workdir`` unless
    ``keep_workdir`` is set. ``detach()`` leaves the processes running (for ``up.sh``); a later
    ``ControlPlane.attach(workdir)`` gets them back (for ``down.sh``).
    """

    def __init__(
        self, *, config: ControlPlaneConfig, workdir: Path | None = None, keep_workdir: bool = False
    ) -> None:
        self.config = config
        self.workdir = Path(tempfile.mkdtemp(prefix="karta-cluster-")) if workdir is None else workdir
        self.keep_workdir = keep_workdir
        self.pki = self.workdir / "pki"
        self.kubeconfig = self.workdir / "kubeconfig"
        self.etcd_port = 0
        self.apiserver_port = 0
        self.pids: dict[str, int] = {}
        self.raydash_port = 0  # the Ray dashboard stand-in KubeRay's HTTP_PROXY points at
        self.kueue_webhook_port = 0  # Kueue's webhook server (https://127.0.0.1:<port>)
        self.kueue_visibility_port = 0  # its visibility API server (on the host address), 0: off
        self._host_address: str | None = None
        self._kueue_crd_port = 0  # the port its CRDs' conversion webhooks name
        self._kueue_started = False
        self._kueue_objects: list[dict[str, Any]] = []
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    # -- public facts -------------------------------------------------------------------------
    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def ca_file(self) -> Path:
        return self.pki / "ca.crt"

    @property
    def client_cert(self) -> tuple[Path, Path]:
        return self.pki / "admin.crt", self.pki / "admin.key"

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS context that trusts the test CA and presents the admin client certificate."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        cert, key = self.client_cert
        ctx.load_cert_chain(str(cert), str(key))
        return ctx

    @property
    def raydash_url(self) -> str | None:
        """The control API of hack/raydash (``--operators kuberay``), else None."""
        return f"http://127.0.0.1:{self.raydash_port}" if self.raydash_port else None

    def log_file(self, component: str) -> Path:
        return self.workdir / "logs" / f"{component}.log"

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        try:
            self.workdir.mkdir(parents=True, exist_ok=True)
            (self.workdir / "logs").mkdir(exist_ok=True)
            generate_pki(self.pki)
            for attempt in range(1, self.config.start_attempts + 1):
                self.etcd_port = free_port()
                self.apiserver_port = free_port()
                write_kubeconfig(self.kubeconfig, server=self.server, pki=self.pki)
                try:
                    self._start_etcd()
                    self._wait_etcd()
                    self.start_apiserver()
                    break
                except PortInUseError:
                    self._terminate("kube-apiserver")
                    self._terminate("etcd")
                    shutil.rmtree(self.workdir / "etcd", ignore_errors=True)
                    if attempt == self.config.start_attempts:
                        raise
            if self.config.controllers:
                self._start_controller("kube-controller-manager", self._controller_manager_args)
                self._start_controller("kube-scheduler", self._scheduler_args)
            self._start_addons()
            self._save_state()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_controller(self, name: str, args: Callable[[int], list[str]]) -> None:
        for attempt in range(1, self.config.start_attempts + 1):
            port = free_port()
            self._spawn(name, args(port))
            try:
                self._wait_healthz(name, port)
                return
            except PortInUseError:
                self._terminate(name)
                if attempt == self.config.start_attempts:
                    raise

    def start_apiserver(self) -> None:
        """(Re)start kube-apiserver on the same port and wait for ``/readyz``."""
        self._spawn("kube-apiserver", self._apiserver_args())
        self.wait_ready()

    def stop_apiserver(self) -> None:
        self._terminate("kube-apiserver")

    def stop(self, *, keep_logs: Path | None = None) -> None:
        """Stop every component, then move the logs to ``keep_logs`` (replacing what is there)
        when given, and remove the work directory unless ``keep_workdir``."""
        for name in [n for n in self.pids if n not in CORE] + list(CORE):
            self._terminate(name)
        logs = self.workdir / "logs"
        if keep_logs is not None and logs.is_dir():
            shutil.rmtree(keep_logs, ignore_errors=True)
            keep_logs.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(logs), str(keep_logs))
        if not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def detach(self) -> None:
        """Forget the processes without stopping them (they run in their own sessions)."""
        self._save_state()
        self._procs.clear()

    @classmethod
    def attach(cls, workdir: Path) -> ControlPlane:
        """The control plane that ``detach()`` left running in ``workdir``."""
        state = json.loads((workdir / STATE_FILE).read_text())
        cp = cls(config=ControlPlaneConfig(bin_dir=Path(state["bin_dir"])), workdir=workdir)
        cp.etcd_port = int(state["etcd_port"])
        cp.apiserver_port = int(state["apiserver_port"])
        cp.pids = {k: int(v) for k, v in state["pids"].items()}
        cp.raydash_port = int(state.get("raydash_port") or 0)
        return cp

    # -- internals ----------------------------------------------------------------------------
    def _save_state(self) -> None:
        state = {
            "server": self.server,
            "kubeconfig": str(self.kubeconfig),
            "bin_dir": str(self.config.bin_dir),
            "etcd_port": self.etcd_port,
            "apiserver_port": self.apiserver_port,
            "pids": self.pids,
            "raydash_port": self.raydash_port,
        }
        (self.workdir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["GOMAXPROCS"] = str(self.config.gomaxprocs)
        return env

    def _spawn(
        self, name: str, args: list[str], *, binary: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        binary = binary or self.config.bin_dir / name
        with self.log_file(name).open("ab") as log:
            proc = subprocess.Popen(
                [str(binary), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env={**self._env(), **(env or {})},
                start_new_session=True,  # own process group: killed as one, outlives up.sh
                preexec_fn=_die_with_parent if self.config.die_with_parent else None,
            )
        self._procs[name] = proc
        self.pids[name] = proc.pid

    def _alive(self, name: str) -> bool:
        proc = self._procs.get(name)
        if proc is not None:
            return proc.poll() is None
        pid = self.pids.get(name)
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def _terminate(self, name: str, timeout: float = 15.0) -> None:
        pid = self.pids.pop(name, None)
        proc = self._procs.pop(name, None)
        if pid is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig)  # pid == pgid: each component leads its own session
            except ProcessLookupError:
                break
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if proc is not None:
                    if proc.poll() is not None:
                        return
                else:
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        return
                time.sleep(0.05)
        if proc is not None:
            proc.wait(timeout=timeout)

    def _log_tail(self, name: str, lines: int = 30) -> str:
        try:
            text = self.log_file(name).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _exited(self, name: str) -> ControlPlaneError:
        """Why ``name`` exited: the log's error lines (the first cause is often far above the
        shutdown messages that end the log) and its tail. A lost port race anywhere in the log
        makes it a ``PortInUseError``, which start-up retries with new ports."""
        try:
            text = self.log_file(name).read_text(errors="replace")
        except OSError:
            text = ""
        lines = text.splitlines()
        errors = [line for line in lines if _looks_like_error(line)][:12]
        cls = PortInUseError if "address already in use" in text.lower() else ControlPlaneError
        parts = [f"{name} exited during start-up (log: {self.log_file(name)})"]
        if errors:
            parts += ["first error lines:", *errors, "last lines:"]
        parts += lines[-30:]
        return cls("\n".join(parts))

    def _start_etcd(self) -> None:
        peer_port = free_port()
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        self._spawn(
            "etcd",
            [
                "--name=default",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--initial-cluster-state=new",
                "--unsafe-no-fsync=true",  # throw-away data: no fsync keeps tests fast
                "--log-level=warn",
            ],
        )

    def _wait_etcd(self) -> None:
        url = f"http://127.0.0.1:{self.etcd_port}/health"
        deadline = time.monotonic() + self.config.ready_timeout
        while time.monotonic() < deadline:
            if not self._alive("etcd"):
                raise self._exited("etcd")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if json.loads(resp.read()).get("health") == "true":
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise ControlPlaneError(
            f"etcd not healthy after {self.config.ready_timeout}s:\n{self._log_tail('etcd')}"
        )

    def _wait_healthz(self, name: str, port: int, *, url: str | None = None) -> None:
        """Wait for a controller's ``/healthz`` (self-signed serving certificate, so unverified),
        or for ``url`` (plain HTTP probes of kwok and the operators)."""
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        url = url or f"https://127.0.0.1:{port}/healthz"
        deadline = time.monotonic() + self.config.ready_timeout
        while time.monotonic() < deadline:
            if not self._alive(name):
                raise self._exited(name)
            try:
                with urllib.request.urlopen(url, context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise ControlPlaneError(
            f"{name} not healthy after {self.config.ready_timeout}s:\n{self._log_tail(name)}"
        )

    def wait_ready(self) -> None:
        """Poll ``/readyz`` with the admin certificate until it answers 200."""
        ctx = self.ssl_context()
        deadline = time.monotonic() + self.config.ready_timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if not self._alive("kube-apiserver"):
                raise self._exited("kube-apiserver")
            try:
                with urllib.request.urlopen(f"{self.server}/readyz", context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read()[-500:].decode(errors='replace')}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.2)
        raise ControlPlaneError(
            f"kube-apiserver not ready after {self.config.ready_timeout}s ({last}):\n"
            f"{self._log_tail('kube-apiserver')}"
        )

    def _apiserver_args(self) -> list[str]:
        pki = self.pki
        args = [
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # A loopback address may not be a Service endpoint: no "kubernetes" endpoints then.
            "--endpoint-reconciler-type=none",
            f"--secure-port={self.apiserver_port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            # Pods must not wait for the token controller to create the default ServiceAccount,
            # and fake Node objects (no kubelet) must not get the not-ready taint on creation.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            # The aggregation layer (APIService objects, e.g. Kueue's visibility API): the client
            # certificate it presents to aggregated servers and the headers they read the user
            # from (kubeadm's flags). No kube-proxy runs, so a Service's ClusterIP leads nowhere:
            # the aggregator routes to the Service's endpoints (EndpointSlices) directly; on a
            # machine without a non-loopback address, Kueue's visibility server is reached through
            # an ExternalName Service instead, which only the routing to Services resolves.
            f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
            f"--enable-aggregator-routing={'true' if self._aggregator_routing else 'false'}",
            "--profiling=false",
            "--v=1",
        ]
        if self.config.feature_gates:
            args.append(f"--feature-gates={_gates(self.config.feature_gates)}")
        if self.config.runtime_config:
            args.append(f"--runtime-config={','.join(self.config.runtime_config)}")
        args.extend(self.config.extra_apiserver_args)
        return args

    def _controller_manager_args(self, port: int) -> list[str]:
        args = [
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            "--leader-elect=false",
            f"--service-account-private-key-file={self.pki / 'sa.key'}",
            f"--root-ca-file={self.pki / 'ca.crt'}",
            "--use-service-account-credentials=false",
            # Fake Node objects have no kubelet heartbeat: keep them Ready (no taints, no evictions).
            # No StatefulSet controller: no LeaderWorkerSet operator runs either, so the tests and
            # hack/demo/per-replica-gangs.sh create an LWS's StatefulSets and their pods as LWS and
            # its pod webhook would (the group-index labels); the StatefulSet controller would create
            # its own pods without those labels, or delete the ones the test made.
            "--controllers=*,-node-lifecycle-controller"
            + ("" if self.config.statefulset_controller else ",-statefulset-controller"),
            "--profiling=false",
            "--v=1",
        ]
        if self.config.feature_gates:
            args.append(f"--feature-gates={_gates(self.config.feature_gates)}")
        return args

    # -- kwok and the operators ------------------------------------------------------------------
    def _start_addons(self) -> None:
        unknown = [name for name in self.config.operators if name not in OPERATORS]
        if unknown:
            raise ControlPlaneError(f"unknown operator {', '.join(unknown)} (known: {', '.join(OPERATORS)})")
        if self.config.kwok:
            self._start_addon("kwok", self._kwok_args, probe="healthz")
        names = [*self.config.operators, *(["kueue"] if self.config.kueue is not None else [])]
        if not names:
            return
        # One apply and one wait for every operator (each kubectl call costs its discovery).
        binaries = {name: build_addon(name) for name in names}  # modules now cached
        files = [
            f
            for name in self.config.operators
            for d in addon_crds(name)
            for f in sorted(d.glob("*.yaml"))
            if f.name != "kustomization.yaml"
        ]
        if "training" in self.config.operators:
            files.append(self._prepare_training_operator())
        kubectl = build_kubectl()
        if self.config.kueue is not None:
            files.append(self._prepare_kueue(kubectl))
        applied = self._kubectl(
            kubectl, "apply", "--server-side", "-o", "name", *(f"--filename={f}" for f in files)
        )
        crds = [n for n in applied.split() if n.startswith("customresourcedefinition")]
        self._kubectl(kubectl, "wait", "--for=condition=Established", "--timeout=60s", *crds)
        if "kuberay" in self.config.operators:
            self._start_raydash()
        for name, binary in binaries.items():
            self._start_addon(name, self._operator_args(name), probe="readyz", binary=binary)
        if self.config.kueue is not None:
            self._register_kueue_webhooks(kubectl)
            self._register_kueue_visibility(kubectl)

    def _start_raydash(self) -> None:
        """hack/raydash: the Ray dashboards of every RayCluster's head pod, reached by KubeRay
        through ``HTTP_PROXY`` (see ``_start_addon``)."""
        script = HACK / "raydash" / "raydash.py"
        for attempt in range(1, self.config.start_attempts + 1):
            self.raydash_port = free_port()
            self._spawn("raydash", [str(script), f"--port={self.raydash_port}"], binary=Path(sys.executable))
            try:
                self._wait_healthz("raydash", 0, url=f"{self.raydash_url}/raydash/state")
                return
            except PortInUseError:
                self._terminate("raydash")
                if attempt == self.config.start_attempts:
                    raise

    def _kubectl(self, kubectl: Path, *args: str) -> str:
        proc = subprocess.run(
            [str(kubectl), f"--kubeconfig={self.kubeconfig}", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args[:2])} failed: {proc.stderr.strip()}")
        return proc.stdout

    def _start_addon(
        self, name: str, args: Callable[[int, int], list[str]], *, probe: str, binary: Path | None = None
    ) -> None:
        """Start ``name`` with ``args(probe_port, other_port)`` and wait for its plain-HTTP probe."""
        binary = binary or build_addon(name)
        for attempt in range(1, self.config.start_attempts + 1):
            port, other = free_port(), free_port()
            env = {"KUBECONFIG": str(self.kubeconfig)}  # the operators' controller-runtime reads it
            if name == "training":
                env["MY_POD_NAMESPACE"] = TRAINING_NAMESPACE  # where its cert rotator's Secret is
            if name == "kuberay" and self.raydash_port:
                # Its dashboard and Serve-proxy clients are net/http clients with the default
                # transport: http://<head-svc>.<ns>.svc.cluster.local:8265 and http://<pod-ip>:8000
                # go to the stand-in; the API server (https, 127.0.0.1) is never proxied.
                env["HTTP_PROXY"] = env["http_proxy"] = self.raydash_url or ""
                env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
            self._spawn(name, args(port, other), binary=binary, env=env)
            try:
                self._wait_healthz(name, port, url=f"http://127.0.0.1:{port}/{probe}")
                return
            except ControlPlaneError:
                # Any exit during start-up is retried with new ports, not only a logged lost port
                # race: the training operator binds its webhook port only after its controllers
                # start, and on a lost race exits through its own "unable to create controller"
                # path without ever logging the bind error (reproduced: a busy --webhook-server-port
                # gives exactly that log). A start-up timeout (still running) is not retried.
                exited = not self._alive(name)
                self._terminate(name)
                if not exited or attempt == self.config.start_attempts:
                    raise

    def _kwok_args(self, port: int, _other: int) -> list[str]:
        key, value = KWOK_NODE_ANNOTATION
        return [
            f"--kubeconfig={self.kubeconfig}",
            f"--config={HACK / 'kwok' / 'stages.yaml'}",  # our Stages (no Stage CRD, no defaults)
            f"--manage-nodes-with-annotation-selector={key}={value}",
            f"--server-address=127.0.0.1:{port}",  # /healthz; the kubelet API nobody calls
            "--node-ip=127.0.0.1",
            "--cidr=10.244.0.0/16",  # pod IPs it hands out (virtual: nothing routes to them)
            # No Lease per Node: no node-lifecycle controller runs to read them (1,000 Nodes in bench/).
            "--node-lease-duration-seconds=0",
        ]

    def _operator_args(self, name: str) -> Callable[[int, int], list[str]]:
        if name == "kueue":
            return self._kueue_args
        if name == "kuberay":
            # Webhooks are off unless ENABLE_WEBHOOKS=true (not set here).
            return lambda probe, metrics: [
                f"--health-probe-bind-address=127.0.0.1:{probe}",
                f"--metrics-addr=127.0.0.1:{metrics}",
                "--enable-leader-election=false",
            ]
        # v1.8.1 and v1.9.3 always start their webhook server (no flag turns it off); no
        # ValidatingWebhookConfiguration is created, so the API server never calls it.
        return lambda probe, metrics: [
            f"--health-probe-bind-address=127.0.0.1:{probe}",
            f"--metrics-bind-address=127.0.0.1:{metrics}",
            f"--webhook-server-port={free_port()}",
            "--leader-elect=false",
        ]

    def _prepare_training_operator(self) -> Path:
        """What its Deployment's manifests provide: its namespace and the (empty) Secret its cert
        rotator fills (returned as a manifest file to apply), and a serving certificate in the
        directory the Secret would be mounted at (the rotator waits for the files; any valid pair
        serves: nothing calls the webhooks)."""
        objects = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TRAINING_NAMESPACE}},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "training-operator-webhook-cert", "namespace": TRAINING_NAMESPACE},
            },
        ]
        path = self.workdir / "training-operator.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        TRAINING_CERT_DIR.mkdir(parents=True, exist_ok=True)
        for source, target in (("apiserver.crt", "tls.crt"), ("apiserver.key", "tls.key")):
            if not (TRAINING_CERT_DIR / target).is_file():
                tmp = TRAINING_CERT_DIR / f".{target}.{os.getpid()}"
                shutil.copyfile(self.pki / source, tmp)
                tmp.replace(TRAINING_CERT_DIR / target)
        return path

    # -- Kueue ------------------------------------------------------------------------------------
    @property
    def _kueue_dir(self) -> Path:
        return self.workdir / "kueue"

    @property
    def _kueue_namespace(self) -> str:
        return str((self.config.kueue or {}).get("namespace") or "kueue-system")

    def _prepare_kueue(self, kubectl: Path) -> Path:
        """Kueue's serving certificate (signed by the test CA, for 127.0.0.1) in the webhook
        server's certificate directory and in the fixed metrics directory, its webhook port, and
        what to apply before it starts (returned as one manifest file): its namespace and its CRDs,
        with the conversion webhooks of its own install (``_kueue_manifests``) on that port, so
        that no CRD changes (and re-initialises its storage) once Kueue runs."""
        certs = self._kueue_dir / "certs"
        certs.mkdir(parents=True, exist_ok=True)
        _signed_cert(
            "kueue",
            subject="/CN=kueue-webhook",
            extensions="basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
            cwd=self.pki,
        )
        for source, target in (("kueue.crt", "tls.crt"), ("kueue.key", "tls.key")):
            shutil.copyfile(self.pki / source, certs / target)
        for what, directory in (
            ("metrics", KUEUE_METRICS_CERT_DIR),
            ("visibility", KUEUE_VISIBILITY_CERT_DIR),
        ):
            for source, target in (("kueue.crt", "tls.crt"), ("kueue.key", "tls.key")):
                if (directory / target).is_file():
                    continue
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                    tmp = directory / f".{target}.{os.getpid()}"
                    shutil.copyfile(self.pki / source, tmp)
                    tmp.replace(directory / target)
                except OSError as exc:
                    raise ControlPlaneError(
                        f"Kueue reads its {what} certificate from {directory} (tls.crt, tls.key) when "
                        f"its internal certificate management is off; cannot write it: {exc}"
                    ) from exc
        self.kueue_webhook_port = self._kueue_crd_port = free_port()
        self._kueue_objects = self._kueue_manifests(kubectl)
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self._kueue_namespace}}
        crds = [o for o in self._kueue_objects if o["kind"] == "CustomResourceDefinition"]
        return self._kueue_list("crds.json", [namespace, *self._kueue_webhooks(crds)])

    def _kueue_list(self, name: str, objects: list[dict[str, Any]]) -> Path:
        path = self._kueue_dir / name
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        return path

    def _kueue_manifests(self, kubectl: Path) -> list[dict[str, Any]]:
        """Kueue's CRDs (config/components/crd/bases) and webhook configurations
        (config/components/webhook), as JSON objects, marking the CRDs whose conversion webhook
        its kustomization enables (patches/webhook_in_<plural>.yaml)."""
        module = addon_module_dir("kueue")
        crd_dir = module / "config" / "components" / "crd"
        converted = {
            line.split("webhook_in_", 1)[1].removesuffix(".yaml") + ".kueue.x-k8s.io"
            for line in (crd_dir / "kustomization.yaml").read_text().splitlines()
            if line.startswith("- path: patches/webhook_in_")
        }
        sources = [*sorted((crd_dir / "bases").glob("*.yaml"))]
        sources = [f for f in sources if f.name not in ("kustomization.yaml", "kustomizeconfig.yaml")]
        sources.append(module / "config" / "components" / "webhook" / "manifests.yaml")
        # One JSON document per object, one after the other (a client-side conversion).
        objects = _json_stream(
            self._kubectl(
                kubectl, "create", "--dry-run=client", "-o", "json", *(f"--filename={f}" for f in sources)
            )
        )
        for obj in objects:
            if obj["kind"] == "CustomResourceDefinition" and obj["metadata"]["name"] in converted:
                obj["spec"]["conversion"] = {"strategy": "Webhook"}  # clientConfig: _kueue_webhooks
        return objects

    def _kueue_webhooks(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``objects`` with every webhook's ``clientConfig`` a ``url`` on Kueue's webhook port and
        the test CA as ``caBundle`` (its install names a Service), the webhook configurations named
        as its install names them, and those limited to some namespaces there limited here too."""
        base = f"https://127.0.0.1:{self.kueue_webhook_port}"
        ca = base64.b64encode(self.ca_file.read_bytes()).decode()
        out: list[dict[str, Any]] = json.loads(json.dumps(objects))  # a deep copy
        for obj in out:
            kind = obj["kind"]
            if kind == "CustomResourceDefinition":
                if obj["spec"].get("conversion", {}).get("strategy") == "Webhook":
                    obj["spec"]["conversion"]["webhook"] = {
                        "clientConfig": {"url": f"{base}/convert", "caBundle": ca},
                        "conversionReviewVersions": ["v1"],
                    }
                continue
            obj["metadata"]["name"] = KUEUE_WEBHOOK_NAMES[kind]
            for webhook in obj["webhooks"]:
                path = webhook["clientConfig"]["service"]["path"]
                webhook["clientConfig"] = {"url": base + path, "caBundle": ca}
                if webhook["name"] in KUEUE_NAMESPACED_WEBHOOKS:
                    webhook["namespaceSelector"] = {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                             "values": ["kube-system", self._kueue_namespace]}
                        ]
                    }  # fmt: skip
        return out

    def _kueue_args(self, probe: int, metrics: int) -> list[str]:
        """Write Kueue's Configuration (``config.kueue`` with this process's ports, certificates
        and leader election) and return its command line. A retry (a port lost to another process)
        moves the webhook server to a new port too (``_register_kueue_webhooks`` follows it)."""
        if self._kueue_started:
            self.kueue_webhook_port = free_port()
        self._kueue_started = True
        config: dict[str, Any] = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            **(self.config.kueue or {}),
        }
        config.update(
            {
                "health": {"healthProbeBindAddress": f"127.0.0.1:{probe}"},
                "metrics": {**dict(config.get("metrics") or {}), "bindAddress": f"127.0.0.1:{metrics}"},
                "webhook": {
                    "host": "127.0.0.1",
                    "port": self.kueue_webhook_port,
                    "certDir": str(self._kueue_dir / "certs"),
                },
                "leaderElection": {"leaderElect": False},
                "internalCertManagement": {"enable": False},
            }
        )
        args: list[str] = []
        gates = dict(config.get("featureGates") or {})
        if gates.get("VisibilityOnDemand", True):
            # The visibility API server (on by default) on the host's address (an EndpointSlice
            # may not name a loopback one; without one, on 127.0.0.1 behind an ExternalName
            # Service), delegating authentication and authorization to the API server through
            # --kubeconfig (without the flag it looks for in-cluster config).
            address = self._visibility_address or "127.0.0.1"
            self.kueue_visibility_port = free_port(address)
            config["visibilityServer"] = {"bindAddress": address, "bindPort": self.kueue_visibility_port}
            args += [
                f"--kubeconfig={self.kubeconfig}",
                f"--visibility-server-port={self.kueue_visibility_port}",
            ]
        else:
            self.kueue_visibility_port = 0
        config["featureGates"] = gates
        path = self._kueue_dir / "config.yaml"  # JSON is YAML; Kueue's decoder reads both
        path.write_text(json.dumps(config, indent=2) + "\n")
        return [f"--config={path}", *args]

    @property
    def _aggregator_routing(self) -> bool:
        """The aggregator routes to a Service's endpoints (``--enable-aggregator-routing``),
        unless Kueue runs on a machine without a non-loopback address: its visibility Service is
        then an ExternalName of 127.0.0.1, which only the routing to Services resolves."""
        return self.config.kueue is None or self._visibility_address is not None

    @property
    def _visibility_address(self) -> str | None:
        """The address Kueue's visibility server listens on and its EndpointSlice names: the
        host's own (non-loopback) address, found once (``host_address``)."""
        if self._host_address is None:
            self._host_address = host_address() or ""
        return self._host_address or None

    def _register_kueue_visibility(self, kubectl: Path) -> None:
        """Kueue's visibility API behind the aggregation layer, as its install
        (config/components/visibility) makes it: the Service ``kueue-visibility-server`` (no
        selector: its EndpointSlice is written here, naming the host address and the port Kueue
        listens on; without a host address an ExternalName Service of 127.0.0.1 and the APIService
        naming Kueue's port), an APIService per version it serves (v1beta2, v1beta1; TLS not
        verified, as its install does: the certificate is whatever /visibility holds), then until
        both are Available (the aggregator reached Kueue)."""
        if not self.kueue_visibility_port:  # VisibilityOnDemand turned off by the configuration
            return
        namespace = self._kueue_namespace
        service = {"name": KUEUE_VISIBILITY_SERVICE, "namespace": namespace}
        port = {"name": "https", "port": 443, "protocol": "TCP"}
        objects: list[dict[str, Any]] = [
            {"apiVersion": "v1", "kind": "Service", "metadata": service, "spec": {"ports": [port]}},
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": KUEUE_VISIBILITY_SERVICE,
                    "namespace": namespace,
                    "labels": {
                        "kubernetes.io/service-name": KUEUE_VISIBILITY_SERVICE,
                        "endpointslice.kubernetes.io/managed-by": "karta-controlplane",
                    },
                },
                "addressType": "IPv4",
                "endpoints": [{"addresses": [self._visibility_address], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": self.kueue_visibility_port, "protocol": "TCP"}],
            },
        ]
        names = []
        for version in KUEUE_VISIBILITY_VERSIONS:
            names.append(f"apiservice/{version}.{KUEUE_VISIBILITY_GROUP}")
            objects.append(
                {
                    "apiVersion": "apiregistration.k8s.io/v1",
                    "kind": "APIService",
                    "metadata": {"name": f"{version}.{KUEUE_VISIBILITY_GROUP}"},
                    "spec": {
                        "group": KUEUE_VISIBILITY_GROUP,
                        "version": version,
                        "groupPriorityMinimum": 100,
                        "versionPriority": 100,
                        "insecureSkipTLSVerify": True,
                        "service": {**service, "port": 443},
                    },
                }
            )
        if self._visibility_address is None:
            # ExternalName: the aggregator (routing to Services) dials <externalName>:<the
            # APIService's port> (k8s.io/apiserver pkg/util/proxy ResolveCluster).
            objects[0]["spec"] = {
                "type": "ExternalName",
                "externalName": "127.0.0.1",
                "ports": [{**port, "port": self.kueue_visibility_port}],
            }
            del objects[1]
            for api in objects[1:]:
                api["spec"]["service"]["port"] = self.kueue_visibility_port
        path = self._kueue_list("visibility.json", objects)
        self._kubectl(kubectl, "apply", "--server-side", "--force-conflicts", f"--filename={path}")
        try:
            self._kubectl(kubectl, "wait", "--for=condition=Available", "--timeout=60s", *names)
        except ControlPlaneError as exc:
            raise ControlPlaneError(
                f"Kueue's visibility API not available through the aggregation layer ({exc}); "
                f"Kueue's log:\n{self._log_tail('kueue')}"
            ) from exc

    def _register_kueue_webhooks(self, kubectl: Path) -> None:
        """Kueue's webhook configurations on the running server, once it serves (its readiness
        waits for the webhook server); its converted CRDs again only if the server moved to
        another port, then until the API server serves them again (a changed CRD re-initialises
        its storage: "429 storage is (re)initializing" meanwhile)."""
        objects = [o for o in self._kueue_objects if o["kind"] != "CustomResourceDefinition"]
        moved = []
        if self._kueue_crd_port != self.kueue_webhook_port:
            moved = [
                o
                for o in self._kueue_objects
                if o["kind"] == "CustomResourceDefinition" and "conversion" in o["spec"]
            ]
        path = self._kueue_list("webhooks.json", self._kueue_webhooks(objects + moved))
        self._kubectl(kubectl, "apply", "--server-side", "--force-conflicts", f"--filename={path}")
        self._kueue_crd_port = self.kueue_webhook_port
        for crd in moved:
            spec = crd["spec"]
            stored = next(v["name"] for v in spec["versions"] if v.get("storage"))
            self._wait_served(f"/apis/{spec['group']}/{stored}/{spec['names']['plural']}")

    def _wait_served(self, path: str) -> None:
        """Until a list of ``path`` answers 200 (not 429 "storage is (re)initializing")."""
        ctx = self.ssl_context()
        deadline = time.monotonic() + self.config.ready_timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.server}{path}?limit=1", context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"{path} not served after {self.config.ready_timeout}s")
            time.sleep(0.1)

    def _scheduler_args(self, port: int) -> list[str]:
        args = [
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            "--leader-elect=false",
            "--profiling=false",
            "--v=1",
        ]
        if self.config.feature_gates:
            args.append(f"--feature-gates={_gates(self.config.feature_gates)}")
        return args


# ------------------------------------------------------------------------------------- the CLI


def default_state_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"karta-cluster-{os.getuid()}"


def _parse_gates(values: Sequence[str]) -> dict[str, bool]:
    gates = dict(DEFAULT_FEATURE_GATES)
    for item in values:
        for part in filter(None, item.split(",")):
            name, _, value = part.partition("=")
            gates[name.strip()] = value.strip().lower() != "false"
    return gates


def _cmd_up(ns: argparse.Namespace) -> int:
    workdir: Path = ns.dir
    if (workdir / STATE_FILE).exists():
        print(f"a control plane already runs in {workdir}; run down.sh first", file=sys.stderr)
        return 1
    bin_dir = build_binaries()
    runtime = list(DEFAULT_RUNTIME_CONFIG) + [r for item in ns.runtime_config for r in item.split(",") if r]
    config = ControlPlaneConfig(
        bin_dir=bin_dir,
        feature_gates=_parse_gates(ns.feature_gates),
        runtime_config=runtime,
        controllers=ns.controllers
        or ns.kwok
        or bool(ns.operators)
        or ns.statefulset_controller
        or ns.kueue
        or ns.kueue_config is not None,
        kwok=ns.kwok,
        operators=[o for item in ns.operators for o in item.split(",") if o],
        statefulset_controller=ns.statefulset_controller,
        die_with_parent=False,
        kueue=_kueue_config(ns),
    )
    cp = ControlPlane(config=config, workdir=workdir, keep_workdir=True)
    started = time.monotonic()
    cp.start()
    cp.detach()
    elapsed = time.monotonic() - started
    print(
        f"# control plane ready in {elapsed:.1f}s; logs in {workdir / 'logs'} "
        f"(down.sh moves them to {kept_logs_dir(workdir)})",
        file=sys.stderr,
    )
    print(f"export KUBECONFIG={cp.kubeconfig}")
    print(f"export KARTA_TEST_KUBECONFIG={cp.kubeconfig}")
    if cp.raydash_url:
        print(f"export KARTA_RAYDASH_URL={cp.raydash_url}")
    return 0


def _kueue_config(ns: argparse.Namespace) -> dict[str, Any] | None:
    if ns.kueue_config is not None:
        try:
            config: dict[str, Any] = json.loads(ns.kueue_config.read_text())
        except (OSError, ValueError) as exc:
            raise ControlPlaneError(
                f"--kueue-config {ns.kueue_config}: not a readable JSON file: {exc}"
            ) from exc
        return config
    return generated_kueue_config() if ns.kueue else None


def kept_logs_dir(workdir: Path) -> Path:
    """Where ``down`` keeps the logs of the control plane of ``workdir``: ``<workdir>-logs``."""
    return workdir.with_name(f"{workdir.name}-logs")


def _cmd_down(ns: argparse.Namespace) -> int:
    workdir: Path = ns.dir
    if not (workdir / STATE_FILE).exists():
        print(f"no control plane in {workdir}", file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)
        return 0
    keep = None if ns.discard_logs else (ns.logs or kept_logs_dir(workdir))
    ControlPlane.attach(workdir).stop(keep_logs=keep)
    if keep is not None:
        print(f"# control plane stopped; its logs are kept in {keep}", file=sys.stderr)
    return 0


def _cmd_build(ns: argparse.Namespace) -> int:
    print(build_binaries(force=ns.force))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build-or-reuse, start, print KUBECONFIG exports")
    up.add_argument("--dir", type=Path, default=default_state_dir(), help="work directory (state, pki, logs)")
    up.add_argument("--feature-gates", action="append", default=[], metavar="A=true,B=false")
    up.add_argument("--runtime-config", action="append", default=[], metavar="group/version=true")
    up.add_argument("--controllers", action="store_true", help="also run controller-manager and scheduler")
    up.add_argument(
        "--kwok",
        action="store_true",
        help="also run kwok: the kubelet of Nodes annotated kwok.x-k8s.io/node=fake (implies --controllers)",
    )
    up.add_argument(
        "--operators", action="append", default=[], metavar="kuberay,training",
        help="also run these operators, after their CRDs (implies --controllers)",
    )  # fmt: skip
    up.add_argument(
        "--statefulset-controller",
        action="store_true",
        help="also run the StatefulSet controller (off by default: the LWS tests create its pods themselves)",
    )
    up.add_argument(
        "--kueue",
        action="store_true",
        help="also run Kueue (hack/kueue), configured for karta's catalog (python -m karta.kueue.config "
        f"--native {' --native '.join(KUEUE_NATIVE)}; implies --controllers)",
    )
    up.add_argument(
        "--kueue-config", type=Path, metavar="FILE",
        help="run Kueue with this Configuration (JSON) instead of the generated one (implies --kueue)",
    )  # fmt: skip
    up.set_defaults(func=_cmd_up)
    down = sub.add_parser(
        "down", help="stop what 'up' started, keep its logs in <dir>-logs, remove its work directory"
    )
    down.add_argument("--dir", type=Path, default=default_state_dir())
    down.add_argument("--logs", type=Path, help="keep the logs here instead of <dir>-logs (replaced)")
    down.add_argument("--discard-logs", action="store_true", help="remove the logs with the work directory")
    down.set_defaults(func=_cmd_down)
    build = sub.add_parser("build", help="build-or-reuse the binaries, print their directory")
    build.add_argument("--force", action="store_true")
    build.set_defaults(func=_cmd_build)
    ns = parser.parse_args(argv)
    try:
        rc: int = ns.func(ns)
    except ControlPlaneError as exc:
        print(f"controlplane: {exc}", file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
