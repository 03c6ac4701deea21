"""The click options several commands share, declared once: kubectl's connection flags
(:func:`connection_options`, docs/spec/format.md#kli-connection; :func:`multi_cluster_options` for a command
that works on several contexts) and ``-o/--output`` with ``--config``
(:func:`output_options`, 17.2; with ``objects``, also kubectl's ``name``, ``jsonpath=`` and
``custom-columns=``, :mod:`karta.cli.printing`), ``--no-headers`` and ``--sort-by``
(:func:`list_options`); and ``-o/--output`` for the commands whose format has a fixed default
(:func:`format_option`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from karta.cli.cluster import CONNECTION_PARAMS, overrides_from
from karta.cli.completion import complete_contexts, complete_namespaces
from karta.cli.errors import UsageError
from karta.cli.printing import CUSTOM_COLUMNS, JSONPATH, OBJECT_FORMATS, OutputChoice

__all__ = [
    "connection_options",
    "format_option",
    "limit_option",
    "list_options",
    "manifest_options",
    "multi_cluster_options",
    "output_options",
]

F = TypeVar("F", bound=Callable[..., Any])


def _options(*, several: bool = False) -> list[Callable[[Any], Any]]:
    opt = click.option
    return [
        opt(
            "--kubeconfig",
            metavar="PATH",
            help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config).",
        ),
        opt(
            "--context",
            metavar="NAME",
            multiple=True,
            help=(
                "A kubeconfig context to list (repeatable: one cluster each, in parallel)."
                if several
                else "The kubeconfig context to use."
            ),
            shell_complete=complete_contexts,
        ),
        opt("--cluster", metavar="NAME", help="The kubeconfig cluster to use."),
        opt("--user", metavar="NAME", help="The kubeconfig user to use."),
        opt(
            "-n",
            "--namespace",
            metavar="NS",
            help="Namespace (default: the context's, else default).",
            shell_complete=complete_namespaces,
        ),
        opt("--server", "-s", metavar="URL", help="The address of the Kubernetes API server."),
        opt("--token", metavar="TOKEN", help="Bearer token (replaces the kubeconfig user's credentials)."),
        opt("--as", "as_user", metavar="USER", help="Username to impersonate."),
        opt(
            "--as-group",
            "as_groups",
            metavar="GROUP",
            multiple=True,
            help="Group to impersonate (repeatable).",
        ),
        opt("--as-uid", metavar="UID", help="UID to impersonate."),
        opt(
            "--insecure-skip-tls-verify",
            is_flag=True,
            default=False,
            help="Do not check the server's certificate (insecure).",
        ),
        opt("--certificate-authority", metavar="PATH", help="A CA certificate file."),
        opt("--client-certificate", metavar="PATH", help="A client certificate file for TLS."),
        opt("--client-key", metavar="PATH", help="A client key file for TLS."),
        opt("--tls-server-name", metavar="NAME", help="Server name for certificate validation."),
        opt(
            "--request-timeout",
            metavar="DURATION",
            help="Time limit per request: seconds or 1m30s (0 = none).",
        ),
        opt(
            "--cache-dir",
            metavar="PATH",
            help="Accepted for kubectl compatibility (kli caches nothing on disk).",
        ),
    ]


def connection_options(func: F) -> F:
    """Add kubectl's connection flags; the command gets them as ``overrides: ConfigOverrides``.
    ``--context`` may be repeated only with the same name: a command of this kind works on one
    cluster, and several are a usage error naming it.

    Place it directly under ``@click.command(...)`` (or anywhere among the options)."""
    return _connection(func, several=False)


def multi_cluster_options(func: F) -> F:
    """:func:`connection_options` for a command that works on several clusters (``kli get``):
    ``--context`` repeatable and ``--all-contexts``; the command also gets ``contexts:
    tuple[str, ...]`` (distinct, in the order given) and ``all_contexts: bool``, and
    ``overrides.context`` is set only when exactly one context is named."""
    func = _connection(func, several=True)
    return click.option(
        "--all-contexts",
        is_flag=True,
        help="Work on every context of the kubeconfig (one cluster each, in parallel).",
    )(func)


def _connection(func: F, *, several: bool) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in CONNECTION_PARAMS}
        contexts = tuple(dict.fromkeys(c for c in values.get("context") or () if c))
        if several:
            kwargs["contexts"] = contexts
        elif len(contexts) > 1:
            command = click.get_current_context().command_path
            raise UsageError(
                f"{command} works on one cluster: --context was given {len(contexts)} contexts "
                f"({', '.join(contexts)})",
                hint="run it once per context; 'kli get' lists several clusters (--context A --context B)",
            )
        kwargs["overrides"] = overrides_from(values)
        return func(*args, **kwargs)

    decorated: Any = wrapper
    for option in reversed(_options(several=several)):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def output_options(*formats: str, objects: bool = False) -> Callable[[F], F]:
    """``-o/--output`` (one of ``formats``) and ``--config``: the options of every command whose
    output format follows the precedence flag > ``$KARTA_OUTPUT`` > config file > table. With
    ``objects`` (a command printing a list of objects) ``-o`` also takes kubectl's ``name``,
    ``jsonpath=TEMPLATE`` and ``custom-columns=SPEC`` (on the command line only); a command may
    offer one of them alone among ``formats`` (``"jsonpath="``)."""
    choices = [*formats, *OBJECT_FORMATS] if objects else list(formats)
    spelled = {JSONPATH: "jsonpath=TEMPLATE", CUSTOM_COLUMNS: "custom-columns=SPEC"}
    shown = "|".join(spelled.get(c, c) for c in choices)

    def decorate(func: F) -> F:
        func = click.option(
            "--config",
            "config_file",
            metavar="PATH",
            help="Config file (default: $KARTA_CONFIG, ~/.karta/config.yaml).",
        )(func)
        func = click.option(
            "-o",
            "--output",
            "output",
            type=OutputChoice(choices),
            metavar=f"[{shown}]",
            default=None,
            help="Output format (default: $KARTA_OUTPUT, the config file, else table).",
        )(func)
        return func

    return decorate


def list_options(func: F) -> F:
    """kubectl's ``--no-headers`` and ``--sort-by=JSONPATH`` for a command printing a list of
    objects (``no_headers: bool``, ``sort_by: str | None``)."""
    func = click.option(
        "--sort-by",
        "sort_by",
        metavar="JSONPATH",
        help="Sort by this field of the objects -o json prints (e.g. --sort-by=.name).",
    )(func)
    return click.option(
        "--no-headers", is_flag=True, help="Print tables and custom columns without the header line."
    )(func)


def format_option(*formats: str, help: str = "Output format.") -> Callable[[F], F]:
    """``-o/--output``, one of ``formats``, the first by default (no config file or environment:
    the commands that print objects to apply, or one fixed report)."""
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Choice(list(formats)),
        default=formats[0],
        show_default=True,
        help=help,
    )


def manifest_options(
    *, required: bool = False, metavar: str = "FILE", what: str = "manifests"
) -> Callable[[F], F]:
    """kubectl's ``-f/--file`` (``file: str | None``: a file of one or more documents, a
    directory or ``-``; :func:`karta.cli.inputs.read_labelled_objects`) and ``-R/--recursive``
    (``recursive: bool``)."""

    def decorate(func: F) -> F:
        func = click.option(
            "-R", "--recursive", is_flag=True, help="With -f DIR, also read its subdirectories."
        )(func)
        return click.option(
            "-f",
            "--file",
            "file",
            required=required,
            metavar=metavar,
            help=f"Workload {what}: a file of one or more documents, a directory or - (stdin).",
        )(func)

    return decorate


def limit_option(flag: str, *, default: int, help: str) -> Callable[[F], F]:
    """A count that limits what a table shows (``0`` = all): ``--pod-limit``, ``--component-limit``."""
    return click.option(flag, type=click.IntRange(min=0), default=default, show_default=True, help=help)


def ref_option(func: F) -> F:
    """``--ref FILE`` (repeatable; ``refs: tuple[str, ...]``): the objects a definition's
    references (extension E3) read, offline (:func:`karta.cli.lookup.reference_evaluator`)."""
    return click.option(
        "--ref",
        "refs",
        multiple=True,
        metavar="FILE",
        help="Objects the definition's references read (repeatable; multi-document YAML or a List); "
        "matched by apiVersion, kind and name or labels. A reference nothing matches is null "
        "([] for a list).",
    )(func)
