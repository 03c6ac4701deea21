"""The command line of ``karta-controller``: controller-runtime's flag names
(docs/spec/format.md#operator-flags).

Parsed with argparse into :class:`Options`. Usage errors exit 2 with one line naming the flag
(argparse's convention, as kubectl's); ``--version`` prints the version and exits 0.
:func:`to_argv` is the way back: the command line of a child process with the parent's options.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from karta.gang.scope import SCOPE_MODES
from karta.render.backends import CONTROLLER_BACKENDS, NO_BACKEND

__all__ = ["ADMISSION_ROLE", "BACKENDS", "CONTROLLER_ROLE", "Options", "parse", "to_argv"]

BACKENDS: Final = CONTROLLER_BACKENDS  # from the registry: none, then the backends it runs
CONTROLLER_ROLE: Final = "controller"
ADMISSION_ROLE: Final = "admission"  # the child process that serves the webhooks (internal)


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None = None
    context: str | None = None
    backend: str = NO_BACKEND
    namespaces: tuple[str, ...] = ()
    gang_scope: str = "opt-in"
    exclude_namespaces: tuple[str, ...] = ()
    scheduler_name: str | None = None
    leader_elect: bool = False
    leader_election_id: str = "karta-operator.run.ai"
    leader_election_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    metrics_bind_address: str = ":8080"
    health_probe_bind_address: str = ":8081"
    enable_webhook: bool = False
    webhook_host: str = "0.0.0.0"
    webhook_port: int = 9443
    webhook_cert_mode: str = "auto"
    webhook_cert_dir: Path = Path("/tmp/k8s-webhook-server/serving-certs")
    webhook_namespace: str | None = None
    webhook_cert_secret: str = "karta-operator-webhook-cert"
    webhook_service_name: str = "karta-operator-webhook"
    webhook_url: str | None = None
    mutating_webhook_name: str = "karta-operator-mutating"
    validating_webhook_name: str = "karta-operator-validating"
    pod_webhook_failure_policy: str = "Fail"
    register_webhooks: bool = False
    log_format: str = "json"
    log_level: str = "info"
    cluster_definitions: bool = True
    catalog: bool = True
    definitions_dir: Path | None = None
    install_catalog: bool = False
    shutdown_timeout: float = 30.0
    resync_period: float = 600.0
    workers: int = 4
    quarantine_budget_breaches: int = 5
    quarantine_window: float = 60.0
    kueue: bool = False
    kueue_native: tuple[str, ...] = ()
    ui: bool = False
    ui_bind_address: str = ":8082"
    # The webhooks in a child process; only where build() may spawn one (karta.controller.main).
    admission_process: bool = True
    role: str = CONTROLLER_ROLE
    extra: dict[str, str] = field(default_factory=dict)


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")


def _positive(text: str) -> float:
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (e.g. 15 or 15s), not {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive duration, not {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="karta-controller",
        description=(
            "The Karta operator (validates and indexes kartas.run.ai objects) and, with --backend, "
            "the gang reconciler that creates the scheduler's group objects for every workload a "
            "Karta describes and binds their pods to them."
        ),
    )
    a = p.add_argument
    a("--version", action="store_true", help="print the version and exit")
    a("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)")
    a("--context", help="the kubeconfig context to use")
    a(
        "--backend",
        choices=BACKENDS,
        default=NO_BACKEND,
        help="the gang backend to create group objects for (default none: operator only); kai only "
        "where KAI Scheduler's own pod-grouper is disabled, since KAI groups pods itself (mode A)",
    )
    a(
        "--namespace",
        action="append",
        dest="namespaces",
        default=[],
        metavar="NS",
        help="watch workloads in NS only (repeatable; default: all namespaces)",
    )
    a(
        "--gang-scope",
        choices=SCOPE_MODES,
        default="opt-in",
        help="which workloads get gangs (label karta.run.ai/gang-scheduling on namespaces and "
        "workloads, docs/controller/gang-reconciler.md): opt-in (default), only those of namespaces "
        "labelled enabled (or opt-in, for workloads labelled enabled); all, every namespace not "
        "labelled disabled",
    )
    a(
        "--exclude-namespace",
        action="append",
        dest="exclude_namespaces",
        default=[],
        metavar="NS",
        help="never gang-schedule in NS (repeatable); the controller's own namespace is excluded "
        "when it runs in a cluster ($POD_NAMESPACE or its service account's), never a kubeconfig's",
    )
    a("--scheduler-name", help="set spec.schedulerName of bound pods (default: the backend's scheduler)")
    a("--leader-elect", action="store_true", help="elect a leader with a coordination.k8s.io Lease")
    a("--leader-election-id", default="karta-operator.run.ai", help="the Lease's name")
    a("--leader-election-namespace", help="the Lease's namespace (default: the pod's or kubeconfig's)")
    a(
        "--leader-elect-lease-duration",
        dest="lease_duration",
        type=_positive,
        default=15.0,
        metavar="SECONDS",
        help="how long a lease holds without renewal (client-go's LeaseDuration)",
    )
    a(
        "--leader-elect-renew-deadline",
        dest="renew_deadline",
        type=_positive,
        default=10.0,
        metavar="SECONDS",
        help="how long the leader tries to renew before it gives up leading",
    )
    a(
        "--leader-elect-retry-period",
        dest="retry_period",
        type=_positive,
        default=2.0,
        metavar="SECONDS",
        help="how often a candidate tries to acquire or renew the lease",
    )
    a("--metrics-bind-address", default=":8080", help="serve /metrics here ([HOST]:PORT; 0 disables)")
    a("--health-probe-bind-address", default=":8081", help="serve /healthz and /readyz here (0 disables)")
    a("--enable-webhook", action="store_true", help="serve the admission webhooks")
    a("--webhook-host", default="0.0.0.0", help="the webhook server's bind address")
    a("--webhook-port", type=int, default=9443, help="the webhook server's port")
    a(
        "--webhook-cert-mode",
        choices=("auto", "manual"),
        default="auto",
        help="auto: generate, store in a Secret and rotate; manual: read mounted tls.crt/tls.key",
    )
    a(
        "--webhook-cert-dir",
        type=Path,
        default=Path("/tmp/k8s-webhook-server/serving-certs"),
        help="where the webhook server reads (manual) or writes (auto) tls.crt and tls.key",
    )
    a("--webhook-namespace", help="the namespace of the webhook Service and certificate Secret")
    a("--webhook-cert-secret", default="karta-operator-webhook-cert", help="the Secret of auto cert mode")
    a("--webhook-service-name", default="karta-operator-webhook", help="the Service the API server calls")
    a(
        "--webhook-url",
        help="register the webhooks with clientConfig.url at this base URL instead of the "
        "Service (e.g. https://127.0.0.1:9443 for a controller outside the cluster)",
    )
    a("--mutating-webhook-name", default="karta-operator-mutating", help="the MutatingWebhookConfiguration")
    a(
        "--validating-webhook-name",
        default="karta-operator-validating",
        help="the ValidatingWebhookConfiguration",
    )
    a(
        "--pod-webhook-failure-policy",
        choices=("Ignore", "Fail"),
        default="Fail",
        help="what the API server does with a pod of the gang-scheduling scope's namespaces when "
        "the pod webhook cannot answer (default Fail: never a pod placed without its gang)",
    )
    a(
        "--register-webhooks",
        type=_bool,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="server-side apply the two webhook configurations at start-up (default false: a Helm "
        "chart or kustomize creates them; true for a local run against a dev cluster)",
    )
    a(
        "--log-format",
        choices=("json", "text"),
        default="json",
        help="one line per record, with the object's key",
    )
    a(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="the lowest level logged",
    )
    a(
        "--cluster-definitions",
        type=_bool,
        default=True,
        metavar="BOOL",
        help="use the cluster's Karta objects (default true; they win over the catalog per root GVK)",
    )
    a("--catalog", type=_bool, default=True, metavar="BOOL", help="use the built-in catalog (default true)")
    a(
        "--definitions-dir",
        type=Path,
        help="a directory of Karta files (default: $KARTA_DEFINITIONS or ~/.karta/definitions)",
    )
    a(
        "--install-catalog",
        action="store_true",
        help="apply the built-in catalog as Karta objects (never over a user's Karta for the same GVK)",
    )
    a(
        "--shutdown-timeout",
        type=_positive,
        default=30.0,
        metavar="SECONDS",
        help="how long to drain work on SIGTERM",
    )
    a("--resync-period", type=_positive, default=600.0, metavar="SECONDS", help="a full reconcile this often")
    a("--workers", type=int, default=4, help="concurrent reconciles per controller")
    a(
        "--quarantine-budget-breaches",
        type=int,
        default=5,
        metavar="N",
        help="quarantine a definition whose evaluations breach their per-object budget N times "
        "within --quarantine-window: no part evaluates it until its Karta changes (0: never)",
    )
    a(
        "--quarantine-window",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="the window of --quarantine-budget-breaches (default 60)",
    )
    a(
        "--kueue",
        action="store_true",
        help="be Kueue's adapter for every covered kind it can manage (docs/kueue.md): workloads "
        "labelled kueue.x-k8s.io/queue-name are suspended at creation (with --enable-webhook), "
        "get a Kueue Workload, and are started on admission, stopped on eviction",
    )
    a(
        "--kueue-native",
        action="append",
        dest="kueue_native",
        default=[],
        metavar="FRAMEWORK",
        help="a Kueue built-in framework (e.g. batch/job) Kueue's configuration keeps: its kind is "
        "left to Kueue (repeatable; as python -m karta.kueue.config --native)",
    )
    a(
        "--ui",
        action="store_true",
        help="serve the read-only web view and JSON API of every workload (docs/ui.md) on "
        "--ui-bind-address, with the controller's ServiceAccount; no authentication of its own",
    )
    a("--ui-bind-address", default=":8082", help="the web view's [HOST]:PORT (with --ui)")
    a(
        "--admission-process",
        type=_bool,
        default=True,
        metavar="BOOL",
        help="with --enable-webhook, serve the webhooks from a child process of this one, so that "
        "reconcile work never delays an admission answer (default true; false: in this process)",
    )
    a("--role", choices=(CONTROLLER_ROLE, ADMISSION_ROLE), default=CONTROLLER_ROLE, help=argparse.SUPPRESS)
    return p


def parse(argv: list[str] | None = None) -> tuple[Options, bool]:
    """The options and whether ``--version`` was asked for."""
    ns = parser().parse_args(argv)
    values = {k: v for k, v in vars(ns).items() if k != "version"}
    values["namespaces"] = tuple(values["namespaces"])
    values["exclude_namespaces"] = tuple(values["exclude_namespaces"])
    values["kueue_native"] = tuple(values["kueue_native"])
    from karta.kueue.config import KueueConfigError, kueue_integrations

    try:
        kueue_integrations((), native=values["kueue_native"])
    except KueueConfigError as exc:
        parser().error(f"--kueue-native: {exc}")
    if values["workers"] < 1:
        parser().error("--workers must be at least 1")
    if values["quarantine_budget_breaches"] < 0:
        parser().error("--quarantine-budget-breaches must be at least 0")
    return Options(**values), bool(ns.version)


def to_argv(options: Options) -> list[str]:
    """The command line that :func:`parse` reads back as ``options`` (every flag spelt
    ``--flag=value``, so that no value is ever read as a flag; ``extra`` has no flag)."""
    argv: list[str] = []
    for action in parser()._actions:
        if not action.option_strings or action.dest in ("help", "version"):
            continue
        flag, value = action.option_strings[0], getattr(options, action.dest)
        if isinstance(action, argparse._AppendAction):
            argv += [f"{flag}={item}" for item in value]
        elif action.nargs == 0:  # store_true
            if value:
                argv.append(flag)
        elif value is not None:
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            argv.append(f"{flag}={text}")
    return argv
