"""References (karta extension E3, docs/format-extensions.md): the related objects a definition
reads, planned from the workload, fetched by the consumer, bound as ``$<name>`` by the library.

Three pure steps, so that every consumer (``kli -f --ref``, live ``kli``, the web view, the
controller's shared cache) fetches its own way and evaluates the same way:

1. :func:`plan_references` — given the definition and the workload, which objects to get or list:
   one :class:`ReferenceRequest` per reference (GVK, namespace, name or label selector). A
   reference's own expressions (``nameExpression``, ``namespaceExpression``, label value
   expressions) run on the workload alone, with no reference bound: no cycle is possible.
2. The consumer fetches: :func:`resolve_offline` matches given objects (``kli --ref FILE``);
   a live consumer GETs or LISTs each request and reports what it got as :class:`Fetched`
   (``forbidden`` for a 403: never the same as missing). :meth:`ReferenceRequest.matches` says
   whether an object answers a request (the controller's index of referenced objects).
3. :func:`bind_references` — the fetched objects checked against :class:`ReferenceLimits`
   (objects per list, bytes per object and in total: :class:`~karta.errors.ReferenceLimitError`,
   which ends the object's evaluation like a jq budget) and turned into bindings: an object or
   null per lookup, an array per list. :meth:`Resolution.evaluator` is the
   :class:`~karta.jq.BoundEvaluator` every extraction of the object then uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta._records import record
from karta.errors import JqBudgetError, JqError, ReferenceLimitError

if TYPE_CHECKING:
    from karta.jq import Evaluator
    from karta.model.types import Karta, Reference

__all__ = [
    "DEFAULT_LIMITS",
    "Fetched",
    "ReferenceLimits",
    "ReferenceProblem",
    "ReferenceRequest",
    "Resolution",
    "bind_references",
    "plan_references",
    "referenced_kinds",
    "resolve",
    "resolve_offline",
]


@record(slots=True)
class ReferenceLimits:
    """What the references of one object may bring in (the definition's side, ``references``
    at most ``references``, is checked by ``kli validate``). ``list_objects``: objects one list
    reference may match; ``object_bytes``: the JSON size of one referenced object;
    ``total_bytes``: of all referenced objects of one workload together."""

    references: int = 16
    list_objects: int = 1000
    object_bytes: int = 1 << 20
    total_bytes: int = 8 << 20


DEFAULT_LIMITS = ReferenceLimits()


@record(slots=True)
class ReferenceRequest:
    """What to fetch for one reference: GET ``name`` (lookup) or LIST by ``selector`` (list; an
    empty selector lists every object of the kind, bounded like any list) of
    ``group/version, kind`` in ``namespace`` (None: the workload has none; a cluster-scoped kind
    ignores it). ``error``: the plan could not be made (a failing expression): nothing to fetch,
    the reference is bound empty and the error reported. ``name`` None on a lookup without
    ``error``: the name expression gave no name (bound null)."""

    reference: str
    group: str
    version: str
    kind: str
    is_list: bool
    namespace: str | None = None
    name: str | None = None
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    error: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def what(self) -> str:
        """``kind group/version`` for messages."""
        return f"{self.kind} {self.api_version}"

    @property
    def fetches(self) -> bool:
        """Whether there is anything to fetch."""
        return self.error is None and (self.is_list or self.name is not None)

    @property
    def selector(self) -> str:
        """The label selector in Kubernetes' text form (a LIST's ``labelSelector``)."""
        parts = [f"{k}={v}" for k, v in self.match_labels]
        for key, op, values in self.match_expressions:
            if op == "Exists":
                parts.append(key)
            elif op == "DoesNotExist":
                parts.append(f"!{key}")
            else:
                parts.append(f"{key} {'in' if op == 'In' else 'notin'} ({','.join(values)})")
        return ",".join(parts)

    @property
    def target(self) -> str:
        """What a list matches, for messages: ``matching 'SELECTOR'``, or ``every object of the
        kind`` for a list without a selector."""
        selector = self.selector
        return f"matching '{selector}'" if selector else "(every object of the kind)"

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` answers this request: its apiVersion and kind, its namespace (when it
        has one: a cluster-scoped object has none) and its name or labels."""
        if not self.fetches or obj.get("kind") != self.kind or obj.get("apiVersion") != self.api_version:
            return False
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        namespace = meta.get("namespace")
        if namespace and self.namespace is not None and namespace != self.namespace:
            return False
        if not self.is_list:
            return bool(meta.get("name") == self.name)
        labels = meta.get("labels")
        labels = labels if isinstance(labels, Mapping) else {}
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        for key, op, values in self.match_expressions:
            present = key in labels
            ok = {
                "In": present and labels.get(key) in values,
                "NotIn": not present or labels.get(key) not in values,
                "Exists": present,
                "DoesNotExist": not present,
            }.get(op, False)
            if not ok:
                return False
        return True


@record(slots=True)
class Fetched:
    """What the consumer got for one request: the objects (0 or 1 for a lookup), or why not.
    ``forbidden``: the read was refused (403), reported as an error, never as missing; ``error``:
    another failure; ``note``: something the user should know (nothing given matched)."""

    request: ReferenceRequest
    objects: tuple[Mapping[str, Any], ...] = ()
    forbidden: str | None = None
    error: str | None = None
    note: str | None = None


@record(slots=True)
class ReferenceProblem:
    """One reference that was not read as asked: ``kind`` is ``forbidden``, ``error`` or ``note``
    (the reference is bound null / [] in every case)."""

    reference: str
    kind: str
    message: str


@record(slots=True)
class Resolution:
    """The bindings of one workload's references and what went wrong reading them."""

    bindings: dict[str, Any]
    problems: tuple[ReferenceProblem, ...] = ()

    @property
    def errors(self) -> tuple[ReferenceProblem, ...]:
        return tuple(p for p in self.problems if p.kind != "note")

    def evaluator(self, base: Evaluator) -> Evaluator:
        """``base`` with the bindings bound; ``base`` itself when there are none (a definition
        without references evaluates exactly as before)."""
        if not self.bindings:
            return base
        from karta.jq.bound import BoundEvaluator

        return BoundEvaluator(base, self.bindings)


def _one_string(evaluator: Evaluator, expression: str, obj: Any, what: str) -> str | None:
    """The one string (or null / no result: None) ``expression`` yields on ``obj``."""
    out = evaluator.evaluate(expression, obj)
    if not out or (len(out) == 1 and out[0] is None):
        return None
    if len(out) != 1 or not isinstance(out[0], str):
        raise ValueError(f"{what} '{expression}' must yield one string (or null), got {_shown(out)}")
    return out[0]


def _shown(out: list[Any]) -> str:
    if len(out) != 1:
        return f"{len(out)} results"
    from karta.jq import json_type

    return f"a {json_type(out[0])}"


def _label_value(evaluator: Evaluator, value: str, obj: Any, what: str) -> str | None:
    """A literal label value, or the string the expression ``value`` yields (None: no value)."""
    from karta.model.validate_references import is_literal

    if is_literal(value):
        return value
    out = _one_string(evaluator, value, obj, what)
    if out is not None and not is_literal(out):
        raise ValueError(f"{what} '{value}' yields {out!r}, which is not a label value")
    return out


def _plan_one(
    ref: Reference, obj: Mapping[str, Any], evaluator: Evaluator, workload_ns: str | None
) -> ReferenceRequest:
    gvk = ref.gvk
    group, version, kind = (gvk.group, gvk.version, gvk.kind) if gvk is not None else ("", "", "")
    is_list = ref.list is not None

    def base(**fields: Any) -> ReferenceRequest:
        return ReferenceRequest(ref.name, group, version, kind, is_list, **fields)

    where = f"reference '{ref.name}'"
    try:
        namespace = workload_ns
        if ref.namespace_expression:
            namespace = (
                _one_string(evaluator, ref.namespace_expression, obj, f"{where} namespaceExpression")
                or namespace
            )
        if ref.list is None:
            expr = ref.lookup.name_expression if ref.lookup is not None else ""
            name = _one_string(evaluator, expr, obj, f"{where} lookup.nameExpression") if expr else None
            return base(namespace=namespace, name=name)
        labels: list[tuple[str, str]] = []
        for key, value in sorted((ref.list.match_labels or {}).items()):
            shown = _label_value(evaluator, value, obj, f"{where} list.matchLabels.{key}")
            if shown is None:  # no value: the selector can match nothing sensible
                raise ValueError(f"{where} list.matchLabels.{key} yields no value")
            labels.append((key, shown))
        requirements: list[tuple[str, str, tuple[str, ...]]] = []
        for i, req in enumerate(ref.list.match_expressions):
            values = []
            for j, value in enumerate(req.values):
                one = _label_value(evaluator, value, obj, f"{where} list.matchExpressions[{i}].values[{j}]")
                if one is not None:
                    values.append(one)
            requirements.append((req.key, req.operator, tuple(values)))
        return base(namespace=namespace, match_labels=tuple(labels), match_expressions=tuple(requirements))
    except JqBudgetError:
        raise  # the object's budget is spent: its evaluation ends, as any budget breach ends it
    except (JqError, ValueError) as exc:
        return base(namespace=workload_ns, error=str(exc))


def referenced_kinds(karta: Karta) -> list[tuple[str, str, str]]:
    """The (group, version, kind) the references of ``karta`` read, once each, in definition order:
    what RBAC must let a consumer get (lookup) or list (list), read-only, and what a controller
    watches to re-reconcile the workloads that read an object."""
    out: list[tuple[str, str, str]] = []
    for ref in karta.spec.structure_definition.references:
        if ref.gvk is not None:
            key = (ref.gvk.group, ref.gvk.version, ref.gvk.kind)
            if key not in out:
                out.append(key)
    return out


def plan_references(karta: Karta, obj: Mapping[str, Any], evaluator: Evaluator) -> list[ReferenceRequest]:
    """One request per reference of ``karta``, in definition order (none: ``[]``). ``evaluator``
    is the definition's own, unbound: a reference's expressions see only the workload, under one
    budget for all of them. A failing expression is the request's ``error``; a budget breach
    (:class:`~karta.errors.JqBudgetError`) raises: the object's evaluation ends."""
    refs = karta.spec.structure_definition.references
    if not refs:
        return []
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    namespace = namespace if isinstance(namespace, str) and namespace else None
    with evaluator.session(obj):
        return [_plan_one(ref, obj, evaluator, namespace) for ref in refs]


def resolve_offline(
    requests: Sequence[ReferenceRequest], objects: Iterable[Mapping[str, Any]]
) -> list[Fetched]:
    """What ``objects`` (``kli --ref`` files) answer for each request, in order; a request
    nothing answers gets no objects and a note."""
    pool = list(objects)
    out: list[Fetched] = []
    for request in requests:
        if not request.fetches:
            out.append(Fetched(request))
            continue
        found = tuple(o for o in pool if request.matches(o))
        if not request.is_list:
            found = found[:1]
        note = None
        if not found:
            target = f"named '{request.name}'" if not request.is_list else request.target
            note = f"no given object is a {request.what} {target}" + (
                f" in namespace {request.namespace}" if request.namespace else ""
            )
        out.append(Fetched(request, found, note=note))
    return out


def _size(obj: Any) -> int:
    import orjson

    return len(orjson.dumps(obj))


def bind_references(fetched: Sequence[Fetched], *, limits: ReferenceLimits = DEFAULT_LIMITS) -> Resolution:
    """The bindings of the fetched references (lookup: the object or null; list: the array);
    raises :class:`~karta.errors.ReferenceLimitError` naming the reference and the limit."""
    if len(fetched) > limits.references:
        raise ReferenceLimitError(
            f"the definition has {len(fetched)} references; at most {limits.references} are allowed",
            reference="",
        )
    bindings: dict[str, Any] = {}
    problems: list[ReferenceProblem] = []
    total = 0
    for item in fetched:
        request = item.request
        name = request.reference
        where = f"reference '{name}' ({request.what})"
        if request.error is not None:
            problems.append(ReferenceProblem(name, "error", f"{where}: {request.error}"))
        if item.forbidden is not None:
            problems.append(
                ReferenceProblem(name, "forbidden", f"{where}: reading is forbidden: {item.forbidden}")
            )
        if item.error is not None:
            problems.append(ReferenceProblem(name, "error", f"{where}: {item.error}"))
        if item.note is not None:
            problems.append(
                ReferenceProblem(
                    name, "note", f"{where}: {item.note}; bound as {'[]' if request.is_list else 'null'}"
                )
            )
        objects = item.objects
        if request.is_list and len(objects) > limits.list_objects:
            raise ReferenceLimitError(
                f"{where} matches {len(objects):,} objects; at most {limits.list_objects:,} are allowed",
                reference=name,
            )
        for obj in objects:
            size = _size(obj)
            if size > limits.object_bytes:
                raise ReferenceLimitError(
                    f"{where}: an object of {size:,} bytes; at most {limits.object_bytes:,} per object",
                    reference=name,
                )
            total += size
            if total > limits.total_bytes:
                raise ReferenceLimitError(
                    f"the referenced objects are over {limits.total_bytes:,} bytes together (at {where})",
                    reference=name,
                )
        if request.is_list:
            bindings[name] = list(objects)
        else:
            bindings[name] = objects[0] if objects else None
    return Resolution(bindings, tuple(problems))


def resolve(
    karta: Karta,
    obj: Mapping[str, Any],
    evaluator: Evaluator,
    objects: Iterable[Mapping[str, Any]],
    *,
    limits: ReferenceLimits = DEFAULT_LIMITS,
) -> Resolution:
    """Plan, match ``objects`` offline and bind: ``kli -f --ref`` in one call."""
    return bind_references(resolve_offline(plan_references(karta, obj, evaluator), objects), limits=limits)
