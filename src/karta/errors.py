"""The one exception hierarchy of karta, importable from every layer.

Every user-facing error derives from :class:`KartaError` and carries enough context (file, field
path, jq expression, component, instance) for a one-line message. Message substrings that the
format contract (``docs/spec/format.md``) pins are produced by the raising code, not here.
"""

from __future__ import annotations


class KartaError(Exception):
    """Base class of every error raised by karta."""


# --- jq -------------------------------------------------------------------------------------------


class JqError(KartaError):
    """An expression could not be parsed, compiled or evaluated."""

    def __init__(self, message: str, *, expression: str) -> None:
        super().__init__(message)
        self.expression = expression


class JqParseError(JqError):
    """``failed to parse JQ expression '<e>'``; carries 1-based line and column."""

    def __init__(self, message: str, *, expression: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message, expression=expression)
        self.line = line
        self.column = column


class JqCompileError(JqError):
    """``failed to compile JQ expression '<e>'`` (for example an undefined function)."""


class JqRuntimeError(JqError):
    """``JQ execution error for expression '<e>'``."""


class JqBudgetError(JqRuntimeError):
    """An evaluation went over one of its budgets (docs/spec/format.md#limits and issue 9): time per
    object, memory, output size or steps; ``budget`` names which (``time``, ``memory``,
    ``output``, ``steps``). It ends the extraction of that object, never the process; unlike other
    runtime errors it is not contained in one status matcher (R3), because the budget is the
    object's."""

    def __init__(self, message: str, *, expression: str, budget: str = "") -> None:
        super().__init__(message, expression=expression)
        self.budget = budget


class JqTimeoutError(JqBudgetError):
    """The evaluation ran past its deadline (the time budget)."""

    def __init__(self, message: str, *, expression: str, budget: str = "time") -> None:
        super().__init__(message, expression=expression, budget=budget)


class JqResultLimitError(JqRuntimeError):
    """``query results exceed the allowed number <N>``."""


class ReferenceLimitError(KartaError):
    """The referenced objects of one workload (extension E3) went over a limit
    (:class:`karta.references.ReferenceLimits`): too many references, a list matching too many
    objects, an object or all of them too large. Like a jq budget, it ends that object's
    evaluation, never the process; ``reference`` names the reference ("" for the count)."""

    def __init__(self, message: str, *, reference: str) -> None:
        super().__init__(message)
        self.reference = reference


# --- definitions ----------------------------------------------------------------------------------


class DefinitionError(KartaError):
    """A definition could not be read or decoded (unreadable file, bad YAML, not a Karta)."""


class ValidationError(KartaError):
    """A definition has error findings; ``findings`` holds all of them in a stable order."""

    def __init__(self, message: str, *, findings: list[object] | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])


class ResolutionError(KartaError):
    """No definition, or no single one, covers a workload type (docs/spec/format.md#definition-sources,
    #kli-get)."""


class NoDefinitionError(ResolutionError):
    """``no Karta definition covers <what>``: nothing claims the type at any version."""


class InvalidDefinitionError(NoDefinitionError):
    """``no valid Karta definition covers <what>``: only invalid definitions claim the type (the
    message names them and their first problem); an invalid definition is never used."""


class AmbiguousDefinitionError(ResolutionError):
    """Several definitions claim the type (a collision, or several kinds a type token matches)."""


# --- extraction, status, write-back, pods, gangs -------------------------------------------------


class ExtractionError(KartaError):
    """Components, instances, pod specs or scale could not be extracted from a workload."""


class ConversionError(ExtractionError):
    """A jq result does not have the type the field needs (docs/spec/format.md#typed-results)."""


class QuantityError(KartaError, ValueError):
    """``not a quantity: <value>``: a resource quantity that is not Kubernetes' syntax."""

    def __init__(self, value: object) -> None:
        super().__init__(f"not a quantity: {value!r}")
        self.value = value


class StatusError(KartaError):
    """Status could not be extracted (``failed to extract phase`` / ``conditions`` / ``match status``)."""


class WriteBackError(KartaError):
    """A value could not be written back through a path."""


class PodQueryError(KartaError):
    """A pod-side expression failed the single-value rule or could not be evaluated."""


class InstanceNotFoundError(PodQueryError):
    """``could not match instance id "<id>"``."""


class GangError(KartaError):
    """A gang plan could not be computed (for example a sub-group without scale)."""


class PredictionError(KartaError):
    """A ``kli verify`` predictions document is not one (an unknown key, a value of the wrong type)."""


class JsonPathError(KartaError):
    """A kubectl JSONPath template or path (``-o jsonpath=``, ``custom-columns``, ``--sort-by``)
    that :mod:`karta.jsonpath` cannot parse: a syntax error or a construct outside its subset."""


# --- cluster access (karta.kube) ------------------------------------------------------------------


class ClusterError(KartaError):
    """The cluster could not be configured, reached or asked (raised by ``karta.kube`` only)."""


class KubeConfigError(ClusterError):
    """A kubeconfig, context, user, in-cluster setup or credential plugin is unusable."""


class NoKubeconfigError(KubeConfigError):
    """No kubeconfig file and no in-cluster environment: the caller may stay offline silently."""


class ClusterUnreachableError(ClusterError):
    """The API server could not be reached (connection refused or reset, TLS failure, time-out)."""


class ApiError(ClusterError):
    """The API server answered with an error status; ``status`` is the HTTP code, ``reason`` the
    ``Status.reason`` (``NotFound``, ``Forbidden``, ``Expired``, ``Gone``, ``Conflict``, ...)."""

    def __init__(self, message: str, *, status: int, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class UnknownResourceTypeError(ClusterError):
    """Discovery cannot map a type token or GVK: ``the server doesn't have a resource type "<t>"``."""


# --- scaffolding (karta.scaffold) -----------------------------------------------------------------


class ScaffoldError(KartaError):
    """A CRD could not be turned into a draft Karta (no CRD in the input, unknown kind or version)."""


class KueueError(KartaError):
    """A Kueue admission karta cannot apply to a workload (a conflict, an unknown flavor or
    PodSet), or a Workload object that is not what the adapter made."""
