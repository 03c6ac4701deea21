"""The builtin table: everything karta knows about each jq builtin, one record per name.

Every consumer reads this table instead of keeping its own list of names:

* the compile-time name check (:mod:`karta.jq.scope_check`): :data:`BUILTIN_ARITIES`, exactly
  jq 1.8's builtin set (``name/arity`` as libjq's ``builtins`` lists it);
* the safety validator (:mod:`karta.jq.safety`): ``effect``, ``excessive`` and ``terminates``
  (rejections and warnings), ``path_args`` (assignability), ``unbounded`` (boundedness);
* the fast path (:mod:`karta.jq.fastpath.calls`): ``fast``, how each supported arity runs;
* the code generator (:mod:`karta.jq.codegen`): ``Fast.single``, ``Fast.native``, ``Fast.inline``;
* the program libjq runs (:mod:`karta.jq.printer`): ``builds_objects``, ``sorted_argument`` and
  ``takes_paths`` (where libjq's insertion order must be made gojq's sorted order);
* the schema check (:mod:`karta.schema.paths`): ``flow``, how a builtin passes the object paths of
  its input to its output and where it evaluates its arguments (a builtin without one is "not
  followed": the check says so instead of passing).

Implementations are named, not imported (``Fast.impl``: a function of :mod:`karta.jq.operations`
for values and selectors, a builder of :mod:`karta.jq.fastpath.calls` otherwise), so that the
validator, which runs at ``kli validate`` start-up, loads neither the fast path nor the value
operations. The fast path resolves the names once, when it is imported.

Names that jq 1.8 no longer defines but older engines did (``leaf_paths``, ``recurse_down``) have
no arities: they are not builtins for the name check, and still rejected by the validator.

**What gojq lacks** (``gojq_lacks``, ``gojq_since``; :data:`FORMATS`; ``Variable.gojq_lacks``):
the original implementation and KAI Scheduler evaluate with gojq 0.12.x embedded as a library
(docs/spec/format.md#jq-dialect), so a definition that uses a jq builtin gojq does not define fails there
even though libjq runs it here; the validator rejects it (and warns for builtins gojq added only
during 0.12.x). Sources: the "Difference to jq" section of gojq's README (no ``keys_unsorted``;
``get_jq_origin``, ``get_prog_origin``, ``get_search_list``, ``input_line_number`` and
``$__loc__`` are not supported), and, for the complete list, gojq's own definitions at v0.12.19
(``builtin.jq``, the ``internalFuncs`` table of ``func.go``, ``formatToFunc`` of ``compiler.go``)
compared with jq 1.8's ``builtins``, tag by tag from v0.12.0 for ``gojq_since``: jq 1.8 builtins
missing there are ``have_decnum``, ``have_literal_numbers``, ``lgamma_r`` and the formats
``@base32``/``@base32d``; ``debug``, ``stderr`` and ``input_filename`` exist only in gojq's
command line (``cli/cli.go``), not in the library, and ``input``/``inputs`` compile only with an
input iterator, which the original and KAI do not configure.

**Process-dependent** (``effect="process"``): builtins whose result depends on, or that affect,
the evaluating process: the clock (``now``), the time zone (``localtime``, ``strflocaltime``),
the engine itself (``builtins``, ``$__loc__``, ``get_*``, ``modulemeta``), input files and
streams (``input``, ``inputs``, ``input_filename``, ``input_line_number``), output and exit
(``debug``, ``stderr``, ``halt``, ``halt_error``). Not process-dependent, and so allowed:
``mktime``, ``gmtime``, ``strftime``, ``strptime``, ``todate``/``fromdate`` (they convert the
time they are given, in UTC, in gojq and in libjq: ``mktime`` is ``timegm``), and ``splits``
(a regular-expression split). ``env`` and ``$ENV`` read the environment: a warning (14.2), and
both engines evaluate them to ``{}``, as gojq does as a library (:mod:`karta.jq.printer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

__all__ = [
    "BUILTINS",
    "BUILTIN_ARITIES",
    "FORMATS",
    "GOJQ_HINTS",
    "PREDEFINED_VARIABLES",
    "Builtin",
    "Effect",
    "Fast",
    "Flow",
    "FormatRecord",
    "Variable",
    "fast_of",
    "is_builtin",
]

Effect = Literal["", "deletes", "process", "environment"]
"""What a builtin does besides computing values from its input.

``deletes``: removes parts of its input (``del``; rejected, docs/spec/format.md#expression-safety).
``process``: reads or affects the evaluating process (halt, input, debug, stderr, module metadata, ...;
rejected). ``environment``: reads the process environment (``env``; a warning, 14.2)."""


class Fast(NamedTuple):
    """How the fast path runs one arity of a builtin.

    ``kind``: ``value`` (``impl`` is a function of :mod:`karta.jq.operations`, ``f(v)`` for arity 0
    and ``f(v, a)`` for arity 1, applied to every output of the argument), ``selector`` (``impl`` is
    a test of the input: the input or nothing, a path expression) or ``builder`` (``impl`` is a
    function of :mod:`karta.jq.fastpath.calls` that builds the compiled call from the compiled
    arguments). ``single``: one output on any input, whatever the arguments yield (the code
    generator's :func:`~karta.jq.codegen.is_single`; only the builtins it relies on are marked).
    ``native``: the code generator emits the call inline (a value function as a call, or
    ``inline``; a builder through its ``_inline_<impl>`` method) instead of embedding the closure.
    ``inline``: for a value function, the Python expression to emit instead of the call (``{x}``
    the input variable, ``{fn}`` the function)."""

    kind: Literal["value", "selector", "builder"]
    impl: str
    single: bool = False
    native: bool = False
    inline: str = ""


FlowOutput = Literal["value", "has", "input", "element", "argument", "map", "entries", "groups", "none"]


class Flow(NamedTuple):
    """How one arity of a builtin passes object paths through (the schema check, :mod:`karta.schema`).

    ``output``: ``value`` a new value, not in the object (of JSON type ``type`` when known);
    ``has`` a boolean that tests a key of the input (``has("replicas")`` refers to the field);
    ``input`` the input itself (filtered, reordered or changed: ``select``, ``sort_by``);
    ``element`` an element (or value) of the input (``first``, ``max``, ``add``); ``argument`` the
    outputs of the last argument (``first(f)``, ``limit(n; f)``); ``map`` an array of the first
    argument's outputs on each element; ``entries`` ``to_entries`` of the input; ``groups`` an
    array of arrays of the input's elements (``group_by``); ``none`` no output (``empty``,
    ``error``). ``args``: one letter per argument, what it is evaluated on: ``i`` the input, ``e``
    each element of the input, ``n`` each entry ``{key, value}`` of the input, ``a`` each output
    of the first argument (``any(generator; condition)``)."""

    output: FlowOutput
    args: str = ""
    type: str = ""


class Builtin(NamedTuple):
    """One jq builtin.

    ``arities``: those jq 1.8 defines (empty for names it dropped). ``path_args``: for the arities
    that are path expressions (``path(f)`` and assignment accept them), the indexes of the
    arguments that must be paths themselves. ``excessive``: may produce excessive output (rejected,
    14.2). ``terminates``: False for ``while``/``until`` (a warning). ``unbounded``: True when
    evaluation is not provably bounded for any arity, or the arities that are not (``split/2``,
    the regular-expression form); the evaluator sandboxes untrusted unbounded expressions.
    ``fast``: arity -> how the fast path runs it (absent: libjq runs it). ``gojq_lacks``: True, or
    the arities, that gojq as the original and KAI Scheduler embed it does not define (rejected:
    the definition fails there). ``gojq_since``: arity -> the gojq version that added it (a
    warning: older builds reject it). ``builds_objects``: arity -> ``shallow`` or ``deep``, for
    the arities whose result may hold an object libjq built out of key order (the keys of the
    result, or of any object in it). ``sorted_argument``: arity -> the index of the filter
    argument whose input is an object libjq builds (``sub``'s capture object). ``takes_paths``:
    the arities that evaluate an argument as a path expression (``path``, ``del``, ``pick``).
    ``flow``: arity -> how the schema check follows object paths through it (:class:`Flow`).
    ``total``: the arity-0 form never raises a jq error on any input (``any``) or on any array
    (``array``); the code generator computes such a binding lazily (``codegen.cannot_fail``)."""

    name: str
    arities: tuple[int, ...]
    path_args: Mapping[int, tuple[int, ...]]
    effect: Effect
    excessive: bool
    terminates: bool
    unbounded: bool | tuple[int, ...]
    fast: Mapping[int, Fast]
    gojq_lacks: bool | tuple[int, ...] = False
    gojq_since: Mapping[int, str] = {}
    builds_objects: Mapping[int, Literal["shallow", "deep"]] = {}
    sorted_argument: Mapping[int, int] = {}
    takes_paths: tuple[int, ...] = ()
    flow: Mapping[int, Flow] = {}
    total: Literal["", "any", "array"] = ""

    def is_unbounded(self, arity: int) -> bool:
        unbounded = self.unbounded
        return unbounded is True or (unbounded is not False and arity in unbounded)

    def lacks_in_gojq(self, arity: int) -> bool:
        lacks = self.gojq_lacks
        return lacks is True or (lacks is not False and arity in lacks)


class Variable(NamedTuple):
    """A predefined variable (``$ENV``, ``$__loc__``), with the same meaning of ``effect`` and
    ``gojq_lacks``."""

    name: str
    effect: Effect
    unbounded: bool
    gojq_lacks: bool = False


class FormatRecord(NamedTuple):
    """A ``@format`` gojq knows (``@name`` and ``format("name")``); ``gojq_since`` as for builtins.
    A format not in :data:`FORMATS` is not in gojq (and libjq rejects it at run time)."""

    name: str
    gojq_since: str = ""


def _b(
    name: str,
    *arities: int,
    paths: Mapping[int, tuple[int, ...]] | None = None,
    effect: Effect = "",
    excessive: bool = False,
    terminates: bool = True,
    unbounded: bool | tuple[int, ...] = False,
    fast: Mapping[int, Fast] | None = None,
    gojq_lacks: bool | tuple[int, ...] = False,
    gojq_since: Mapping[int, str] | None = None,
    builds: Mapping[int, Literal["shallow", "deep"]] | None = None,
    sorted_argument: Mapping[int, int] | None = None,
    takes_paths: tuple[int, ...] = (),
    flow: Mapping[int, Flow] | None = None,
    total: Literal["", "any", "array"] = "",
) -> Builtin:
    return Builtin(
        name,
        arities,
        paths or {},
        effect,
        excessive,
        terminates,
        unbounded,
        fast or {},
        gojq_lacks,
        gojq_since or {},
        builds or {},
        sorted_argument or {},
        takes_paths,
        flow or {},
        total,
    )


def _value0(impl: str, inline: str = "") -> Fast:
    """A value function of the input (``name/0``): one output, emitted inline by the generator."""
    return Fast("value", impl, single=True, native=True, inline=inline)


def _value1(impl: str) -> Fast:
    """A value function of the input and one argument value (``name/1``), emitted inline by the
    generator (one call per output of the argument)."""
    return Fast("value", impl, native=True)


def _selector(impl: str) -> Fast:
    return Fast("selector", impl)


def _builder(impl: str, *, single: bool = False, native: bool = False) -> Fast:
    return Fast("builder", impl, single=single, native=native)


_PATH0: Final[Mapping[int, tuple[int, ...]]] = {
    0: ()
}  # a path expression without arguments (the selectors, empty)
_PROCESS: Final[Effect] = "process"
_SHALLOW: Final[Literal["shallow"]] = "shallow"
_DEEP: Final[Literal["deep"]] = "deep"


def _flow_value(type_: str = "") -> Flow:
    """A new value of JSON type ``type_`` (when known) computed from the input alone."""
    return Flow("value", "", type_)


_TEST: Final = Flow("value", "i", "boolean")  # a test of the input with one argument
_SAME: Final = Flow("input")  # the input itself (a selector, a reordering)
_ELEMENT: Final = Flow("element")
_NONE: Final = Flow("none")

_TABLE: Final = (
    _b(
        "IN",
        1,
        2,
        fast={1: _builder("in_of", single=True, native=True), 2: _builder("in_of", single=True, native=True)},
        flow={1: _TEST, 2: Flow("value", "ii", "boolean")},
    ),
    _b("INDEX", 1, 2, builds={1: _SHALLOW, 2: _SHALLOW}),
    _b("JOIN", 2, 3, 4),
    _b("abs", 0, fast={0: _value0("absolute")}, gojq_since={0: "0.12.14"}, flow={0: _flow_value("number")}),
    _b("acos", 0),
    _b("acosh", 0),
    _b(
        "add",
        0,
        1,
        fast={0: _value0("add"), 1: _builder("add_of")},
        gojq_since={1: "0.12.17"},
        builds={0: _SHALLOW, 1: _SHALLOW},
        flow={0: _ELEMENT, 1: Flow("argument", "i")},
    ),
    _b(
        "all",
        0,
        1,
        2,
        fast={
            0: _value0("all_true"),
            1: _builder("all_of", single=True, native=True),
            2: _builder("all_of", single=True, native=True),
        },
        flow={0: _flow_value("boolean"), 1: Flow("value", "e", "boolean"), 2: Flow("value", "ia", "boolean")},
    ),
    _b(
        "any",
        0,
        1,
        2,
        fast={
            0: _value0("any_true"),
            1: _builder("any_of", single=True, native=True),
            2: _builder("any_of", single=True, native=True),
        },
        flow={0: _flow_value("boolean"), 1: Flow("value", "e", "boolean"), 2: Flow("value", "ia", "boolean")},
    ),
    _b("arrays", 0, paths=_PATH0, fast={0: _selector("is_array")}, flow={0: _SAME}),
    _b("ascii_downcase", 0, fast={0: _value0("ascii_downcase")}, flow={0: _flow_value("string")}),
    _b("ascii_upcase", 0, fast={0: _value0("ascii_upcase")}, flow={0: _flow_value("string")}),
    _b("asin", 0),
    _b("asinh", 0),
    _b("atan", 0),
    _b("atan2", 2),
    _b("atanh", 0),
    _b("booleans", 0, paths=_PATH0, fast={0: _selector("is_boolean")}, flow={0: _SAME}),
    _b("bsearch", 1, flow={1: Flow("value", "i", "number")}),
    _b("builtins", 0, effect=_PROCESS),  # the engine's own list: gojq's differs from libjq's
    _b(
        "capture",
        1,
        2,
        unbounded=True,
        builds={1: _SHALLOW, 2: _SHALLOW},
        flow={1: Flow("value", "i", "object"), 2: Flow("value", "ii", "object")},
    ),  # regular expressions: catastrophic backtracking
    _b("cbrt", 0),
    _b("ceil", 0, fast={0: _value0("ceil")}, flow={0: _flow_value("number")}),
    _b("combinations", 0, 1, excessive=True, unbounded=True),
    _b("contains", 1, fast={1: _value1("contains")}, flow={1: _TEST}),
    _b("copysign", 2),
    _b("cos", 0),
    _b("cosh", 0),
    _b("debug", 0, 1, paths={0: (), 1: ()}, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("del", 1, effect="deletes", takes_paths=(1,)),
    _b("delpaths", 1, flow={1: Flow("input", "i")}),
    _b("drem", 2),
    _b("empty", 0, total="any", paths=_PATH0, fast={0: _builder("empty", native=True)}, flow={0: _NONE}),
    _b("endswith", 1, fast={1: _value1("endswith")}, flow={1: _TEST}),
    _b("env", 0, effect="environment", unbounded=True, flow={0: _flow_value("object")}),
    _b("erf", 0),
    _b("erfc", 0),
    _b(
        "error",
        0,
        1,
        paths={0: (), 1: ()},
        fast={0: _builder("error"), 1: _builder("error_of")},
        flow={0: _NONE, 1: Flow("none", "i")},
    ),
    _b("exp", 0, flow={0: _flow_value("number")}),
    _b("exp10", 0, flow={0: _flow_value("number")}),
    _b("exp2", 0, flow={0: _flow_value("number")}),
    _b("explode", 0, flow={0: _flow_value("array")}),
    _b("expm1", 0),
    _b("fabs", 0, flow={0: _flow_value("number")}),
    _b("fdim", 2),
    _b("finites", 0, flow={0: _SAME}),
    _b(
        "first",
        0,
        1,
        total="array",
        paths={0: (), 1: (0,)},
        fast={0: _builder("first", single=True, native=True), 1: _builder("first_of", native=True)},
        flow={0: _ELEMENT, 1: Flow("argument", "i")},
    ),
    _b("flatten", 0, 1, fast={0: _value0("flatten_all"), 1: _value1("flatten")}),
    _b("floor", 0, fast={0: _value0("floor")}, flow={0: _flow_value("number")}),
    _b("fma", 3),
    _b("fmax", 2),
    _b("fmin", 2),
    _b("fmod", 2),
    _b("format", 1, flow={1: Flow("value", "i", "string")}),
    _b("frexp", 0),
    _b(
        "from_entries",
        0,
        fast={0: _value0("from_entries")},
        builds={0: _SHALLOW},
        flow={0: _flow_value("object")},
    ),
    _b("fromdate", 0, flow={0: _flow_value("number")}),
    _b("fromdateiso8601", 0, flow={0: _flow_value("number")}),
    _b("fromjson", 0, fast={0: _value0("fromjson")}, builds={0: _DEEP}, flow={0: _flow_value()}),
    _b("fromstream", 1, builds={1: _DEEP}),
    _b("gamma", 0),
    _b("get_jq_origin", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("get_prog_origin", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("get_search_list", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("getpath", 1, paths={1: ()}, fast={1: _builder("getpath")}),
    _b("gmtime", 0, flow={0: _flow_value("array")}),
    _b("group_by", 1, fast={1: _builder("group_by")}, flow={1: Flow("groups", "e")}),
    _b(
        "gsub",
        2,
        3,
        unbounded=True,
        sorted_argument={2: 1, 3: 1},
        flow={2: Flow("value", "ii", "string"), 3: Flow("value", "iii", "string")},
    ),
    _b("halt", 0, effect=_PROCESS, unbounded=True),
    _b("halt_error", 0, 1, effect=_PROCESS, unbounded=True),
    _b("has", 1, fast={1: _value1("has")}, flow={1: Flow("has", "i", "boolean")}),
    _b("have_decnum", 0, gojq_lacks=True),
    _b("have_literal_numbers", 0, gojq_lacks=True),
    _b("hypot", 2),
    _b("implode", 0, flow={0: _flow_value("string")}),
    _b("in", 1, fast={1: _value1("is_in")}, flow={1: _TEST}),
    _b("index", 1, fast={1: _value1("index_of")}, flow={1: Flow("value", "i", "number")}),
    _b("indices", 1, fast={1: _value1("indices")}, flow={1: Flow("value", "i", "array")}),
    _b("infinite", 0, flow={0: _flow_value("number")}),
    _b("input", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True, builds={0: _DEEP}),
    _b("input_filename", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("input_line_number", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("inputs", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True, builds={0: _DEEP}),
    _b("inside", 1, fast={1: _value1("inside")}, flow={1: _TEST}),
    _b("isempty", 1, fast={1: _builder("isempty")}, flow={1: _TEST}),
    _b("isfinite", 0),
    _b("isinfinite", 0, flow={0: _flow_value("boolean")}),
    _b("isnan", 0, flow={0: _flow_value("boolean")}),
    _b("isnormal", 0, flow={0: _flow_value("boolean")}),
    _b("iterables", 0, paths=_PATH0, fast={0: _selector("is_iterable")}, flow={0: _SAME}),
    _b("j0", 0),
    _b("j1", 0),
    _b("jn", 2),
    _b("join", 1, fast={1: _value1("join")}, flow={1: Flow("value", "i", "string")}),
    _b("keys", 0, fast={0: _value0("keys")}, flow={0: _flow_value("array")}),
    _b("keys_unsorted", 0, gojq_lacks=True),  # gojq keeps no key order
    _b(
        "last",
        0,
        1,
        total="array",
        paths=_PATH0,
        fast={0: _builder("last", single=True, native=True), 1: _builder("last_of", native=True)},
        flow={0: _ELEMENT, 1: Flow("argument", "i")},
    ),
    _b("ldexp", 2),
    _b("leaf_paths", excessive=True, unbounded=True),  # jq 1.7; not in jq 1.8
    _b("length", 0, total="array", fast={0: _value0("length")}, flow={0: _flow_value("number")}),
    _b("lgamma", 0),
    _b("lgamma_r", 0, gojq_lacks=True),
    _b("limit", 2, paths={2: (1,)}, fast={2: _builder("limit")}, flow={2: Flow("argument", "ii")}),
    _b("localtime", 0, effect=_PROCESS),  # the process's time zone
    _b("log", 0, flow={0: _flow_value("number")}),
    _b("log10", 0, flow={0: _flow_value("number")}),
    _b("log1p", 0),
    _b("log2", 0, flow={0: _flow_value("number")}),
    _b("logb", 0),
    _b("ltrim", 0, gojq_since={0: "0.12.15"}, flow={0: _flow_value("string")}),
    _b("ltrimstr", 1, fast={1: _value1("ltrimstr")}, flow={1: Flow("value", "i", "string")}),
    _b("map", 1, fast={1: _builder("map_each")}, flow={1: Flow("map", "e")}),
    _b("map_values", 1, fast={1: _builder("map_values")}, flow={1: Flow("input", "e")}),
    _b(
        "match",
        1,
        2,
        unbounded=True,
        builds={1: _DEEP, 2: _DEEP},
        flow={1: Flow("value", "i", "object"), 2: Flow("value", "ii", "object")},
    ),
    _b("max", 0, total="array", fast={0: _value0("maximum")}, flow={0: _ELEMENT}),
    _b("max_by", 1, fast={1: _builder("max_by")}, flow={1: Flow("element", "e")}),
    _b("min", 0, total="array", fast={0: _value0("minimum")}, flow={0: _ELEMENT}),
    _b("min_by", 1, fast={1: _builder("min_by")}, flow={1: Flow("element", "e")}),
    _b("mktime", 0, flow={0: _flow_value("number")}),
    _b("modf", 0),
    _b("modulemeta", 0, effect=_PROCESS, unbounded=True, builds={0: _DEEP}),
    _b("nan", 0, flow={0: _flow_value("number")}),
    _b("nearbyint", 0),
    _b("nextafter", 2),
    _b("nexttoward", 2),
    _b("normals", 0, flow={0: _SAME}),
    _b(
        "not",
        0,
        total="any",
        fast={0: _value0("negate", inline="{x} is None or {x} is False")},
        flow={0: _flow_value("boolean")},
    ),
    _b("now", 0, effect=_PROCESS),  # the clock
    _b("nth", 1, 2, paths={1: (), 2: (1,)}, flow={1: Flow("element", "i"), 2: Flow("argument", "ii")}),
    _b("nulls", 0, paths=_PATH0, fast={0: _selector("is_null")}, flow={0: _SAME}),
    _b("numbers", 0, paths=_PATH0, fast={0: _selector("is_number")}, flow={0: _SAME}),
    _b("objects", 0, paths=_PATH0, fast={0: _selector("is_object")}, flow={0: _SAME}),
    _b("path", 1, takes_paths=(1,), flow={1: Flow("value", "i", "array")}),
    _b("paths", 0, 1, excessive=True, unbounded=True),
    _b("pick", 1, gojq_since={1: "0.12.14"}, builds={1: _DEEP}, takes_paths=(1,)),
    _b("pow", 2, flow={2: Flow("value", "ii", "number")}),
    _b("range", 1, 2, 3, excessive=True, unbounded=True),
    _b("recurse", 0, 1, 2, paths={0: (), 1: (0,), 2: (0,)}, excessive=True, unbounded=True),
    _b("recurse_down", excessive=True, unbounded=True),  # jq 1.7; not in jq 1.8
    _b("remainder", 2),
    _b("repeat", 1, excessive=True, unbounded=True),
    _b("reverse", 0, fast={0: _value0("reverse")}, flow={0: _SAME}),
    _b("rindex", 1, fast={1: _value1("rindex_of")}, flow={1: Flow("value", "i", "number")}),
    _b("rint", 0),
    _b("round", 0, flow={0: _flow_value("number")}),
    _b("rtrim", 0, gojq_since={0: "0.12.15"}, flow={0: _flow_value("string")}),
    _b("rtrimstr", 1, fast={1: _value1("rtrimstr")}, flow={1: Flow("value", "i", "string")}),
    _b("scalars", 0, paths=_PATH0, fast={0: _selector("is_scalar")}, flow={0: _SAME}),
    _b("scalb", 2),
    _b("scalbln", 2),
    _b("scan", 1, 2, unbounded=True, flow={1: Flow("value", "i"), 2: Flow("value", "ii")}),
    _b("select", 1, paths={1: ()}, fast={1: _builder("select", native=True)}, flow={1: Flow("input", "i")}),
    _b("setpath", 2, builds={2: _DEEP}, flow={2: Flow("input", "ii")}),
    _b("significand", 0),
    _b("sin", 0),
    _b("sinh", 0),
    _b("skip", 2, paths={2: (1,)}, gojq_since={2: "0.12.17"}, flow={2: Flow("argument", "ii")}),
    _b("sort", 0, fast={0: _value0("sort")}, flow={0: _SAME}),
    _b("sort_by", 1, fast={1: _builder("sort_by")}, flow={1: Flow("input", "e")}),
    _b(
        "split", 1, 2, unbounded=(2,), fast={1: _value1("split")}, flow={1: Flow("value", "i", "array")}
    ),  # split/2 takes a regex
    _b(
        "splits",
        1,
        2,
        unbounded=True,
        flow={1: Flow("value", "i", "string"), 2: Flow("value", "ii", "string")},
    ),
    _b("sqrt", 0, fast={0: _value0("sqrt")}, flow={0: _flow_value("number")}),
    _b("startswith", 1, fast={1: _value1("startswith")}, flow={1: _TEST}),
    _b("stderr", 0, effect=_PROCESS, unbounded=True, gojq_lacks=True),
    _b("strflocaltime", 1, effect=_PROCESS),  # the process's time zone
    _b("strftime", 1, flow={1: Flow("value", "i", "string")}),
    _b("strings", 0, paths=_PATH0, fast={0: _selector("is_string")}, flow={0: _SAME}),
    _b("strptime", 1, flow={1: Flow("value", "i", "array")}),
    _b(
        "sub",
        2,
        3,
        unbounded=True,
        sorted_argument={2: 1, 3: 1},
        flow={2: Flow("value", "ii", "string"), 3: Flow("value", "iii", "string")},
    ),
    _b("tan", 0),
    _b("tanh", 0),
    _b("test", 1, 2, unbounded=True, flow={1: _TEST, 2: Flow("value", "ii", "boolean")}),
    _b("tgamma", 0),
    _b("to_entries", 0, fast={0: _value0("to_entries")}, flow={0: Flow("entries")}),
    _b("toboolean", 0, gojq_since={0: "0.12.18"}, flow={0: _flow_value("boolean")}),
    _b("todate", 0, flow={0: _flow_value("string")}),
    _b("todateiso8601", 0, flow={0: _flow_value("string")}),
    _b("tojson", 0, total="any", fast={0: _value0("dumps")}, flow={0: _flow_value("string")}),
    _b("tonumber", 0, fast={0: _value0("tonumber")}, flow={0: _flow_value("number")}),
    _b("tostream", 0, excessive=True),  # output bounded by the input's size
    _b(
        "tostring",
        0,
        total="any",
        fast={0: _value0("tostring", inline="{x} if {x}.__class__ is str else {fn}({x})")},
        flow={0: _flow_value("string")},
    ),
    _b("transpose", 0),
    _b("trim", 0, gojq_since={0: "0.12.15"}, flow={0: _flow_value("string")}),
    _b("trimstr", 1, gojq_since={1: "0.12.18"}, flow={1: Flow("value", "i", "string")}),
    _b("trunc", 0, flow={0: _flow_value("number")}),
    _b("truncate_stream", 1),
    _b("type", 0, total="any", fast={0: _value0("type_name")}, flow={0: _flow_value("string")}),
    _b("unique", 0, fast={0: _value0("unique")}, flow={0: _SAME}),
    _b("unique_by", 1, fast={1: _builder("unique_by")}, flow={1: Flow("input", "e")}),
    _b("until", 2, terminates=False, unbounded=True),
    _b("utf8bytelength", 0, flow={0: _flow_value("number")}),
    _b("values", 0, paths=_PATH0, fast={0: _selector("is_value")}, flow={0: _SAME}),
    _b("walk", 1, excessive=True, unbounded=True),
    _b("while", 2, terminates=False, unbounded=True),
    _b(
        "with_entries",
        1,
        fast={1: _builder("with_entries")},
        builds={1: _SHALLOW},
        flow={1: Flow("value", "n", "object")},
    ),
    _b("y0", 0),
    _b("y1", 0),
    _b("yn", 2),
)

BUILTINS: Final[dict[str, Builtin]] = {b.name: b for b in _TABLE}
"""Every builtin by name."""

BUILTIN_ARITIES: Final[dict[str, tuple[int, ...]]] = {b.name: b.arities for b in _TABLE if b.arities}
"""jq 1.8's builtins: name -> arities (what libjq's ``builtins`` lists)."""

PREDEFINED_VARIABLES: Final[dict[str, Variable]] = {
    "ENV": Variable("ENV", "environment", unbounded=True),
    # The location of the expression in the evaluating program.
    "__loc__": Variable("__loc__", _PROCESS, unbounded=False, gojq_lacks=True),
}

FORMATS: Final[dict[str, FormatRecord]] = {
    f.name: f
    for f in (
        FormatRecord("text"),
        FormatRecord("json"),
        FormatRecord("html"),
        FormatRecord("uri"),
        FormatRecord("urid", gojq_since="0.12.13"),
        FormatRecord("csv"),
        FormatRecord("tsv"),
        FormatRecord("sh"),
        FormatRecord("base64"),
        FormatRecord("base64d"),
    )
}
"""The formats gojq defines (``formatToFunc`` in gojq's ``compiler.go``): jq's ``@base32`` and
``@base32d`` are not among them."""


GOJQ_HINTS: Final[dict[str, str]] = {
    "keys_unsorted": "use keys: gojq iterates objects in sorted key order, so keys is what keys_unsorted "
    "would give there",
    "have_decnum": "numbers are doubles there (docs/spec/format.md#jq-dialect)",
    "have_literal_numbers": "numbers are doubles there (docs/spec/format.md#jq-dialect)",
    "lgamma_r": "use lgamma",
    "input": "there is no second input: use .",
    "inputs": "there is no second input: use .",
    "@base32": "use @base64",
    "@base32d": "use @base64d",
}
"""What to write instead of a builtin, variable (``$name``) or format (``@name``) gojq lacks, for
the message of the evaluation that refuses it; the rest read or affect the evaluating process,
which no definition may (docs/spec/format.md#expression-safety)."""


def is_builtin(name: str, arity: int) -> bool:
    """True if ``name/arity`` is a jq 1.8 builtin."""
    return arity in BUILTIN_ARITIES.get(name, ())


def fast_of(name: str, arity: int) -> Fast | None:
    """How the fast path runs ``name/arity``, or None when it does not."""
    builtin = BUILTINS.get(name)
    return None if builtin is None else builtin.fast.get(arity)
