"""The fast path: compiles the common subset of the jq syntax tree into Python closures over plain data.

Owns the subset's semantics (gojq flavour: objects iterate in sorted key order, integral numbers
behave as ints, ``a // b`` suppresses errors of ``a``). Anything outside the subset raises
:class:`Unsupported` at compile time and the evaluator falls back to libjq.

Every compiled node offers up to four entry points:

* ``many(v, env) -> list`` — all outputs, evaluated eagerly (the hot path);
* ``one(v, env) -> value`` — only for nodes that always yield exactly one output; composing these
  avoids building lists (``.spec.replicas // 1`` never allocates more than its result list);
* ``gen(v, env) -> iterator`` — lazy outputs, used where jq stops early (``first``, ``limit``,
  ``any``/``all``, ``isempty``) or must keep the outputs produced before an error (``try``, ``?``,
  ``//``). Eager evaluation raises exactly when lazy evaluation would raise at some point, so the
  lazy form is only consulted after an eager attempt failed or where jq short-circuits;
* ``paths(v, path, env) -> list[(path, value)]`` — jq's ``path(f)`` mode. ``path`` is ``None`` for
  values that are not locations (a literal, a computed value); using such a value as a path is
  the error ``Invalid path expression with result ...``, raised where jq raises it.

Outputs share structure with the input (no copies): callers must treat results as read-only.
Integral floats inside returned containers are left as they are (``3.0 == 3`` in Python); the
evaluator normalises top-level scalars.

The package is split by concern, each module owning its node kinds: :mod:`~karta.jq.fastpath.core`
(the :class:`Compiled` type, the scope, the combinators), :mod:`~karta.jq.fastpath.paths` (``.``,
indexing, slices, ``.[]``), :mod:`~karta.jq.fastpath.construct` (literals, variables, array, object
and string construction, formats), :mod:`~karta.jq.fastpath.operators` (``|``, ``,``, arithmetic,
comparisons, ``//``, ``and``/``or``), :mod:`~karta.jq.fastpath.control` (``if``, ``try``, ``as``,
``reduce``, ``foreach``), :mod:`~karta.jq.fastpath.calls` (builtin calls, as the builtin table says)
and :mod:`~karta.jq.fastpath.driver` (the entry points below, and which module compiles which node).

Metered compilation (``compile_node(node, metered=True)``, for untrusted definitions; the evaluator
installs the meter of :mod:`karta.jq.budget` on the thread while it runs). The meter is a
per-thread value rather than an ``env`` entry, so the ``fn`` entry points (which take no ``env``)
keep working and every closure and value function reaches it. How each node kind is charged:

* every node except the constant-time leaves (``.``, literals, ``$var``, constant field chains
  ``.a.b[0]``, ``true``/``false``/``null``) is wrapped by :func:`~karta.jq.fastpath.core.metered`:
  one step per evaluation through any entry point, plus one per output (``many``, ``gen``,
  ``paths``). That bounds the work of ``|``, ``,``, ``as`` (fan-out), ``reduce``, ``foreach``,
  ``if``, ``try``/``?``, ``//``, ``and``/``or``, ``.[]``, indexing, slices and every builder's
  loop over the input (``map``, ``select``, ``any``/``all``, ``sort_by``, ``group_by``,
  ``unique_by``, ``min_by``/``max_by``, ``map_values``, ``with_entries``, ``first``, ``last``,
  ``limit``, ``isempty``, ``add(f)``), whose arguments are wrapped nodes themselves. The leaves are
  paid for by their parent's evaluation.
* what is built is charged before it is built (memory, and the output cap): ``[...]``,
  ``{...}``, string interpolation (:mod:`~karta.jq.fastpath.construct`), ``map``, ``map_values``,
  the by-key builders (:mod:`~karta.jq.fastpath.calls`), and every value function and operator
  (:mod:`karta.jq.operations` lists them); walks of values whose tree may be exponentially larger
  than their Python size (rendering, comparing, sorting, flattening, merging) size them first.
* ``$ENV`` and ``env`` are ``{}``; everything else outside the subset still raises
  :class:`Unsupported` (the evaluator sends it to the sandbox worker).

No generated code is used for metered expressions.

Entry points: :func:`compile_node`, :func:`run_paths`, :class:`Compiled`, :class:`Unsupported`,
:data:`EMPTY_ENV` (and :class:`JqFail`, the runtime error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr
from karta.jq._values import JqFail
from karta.jq.fastpath.core import EMPTY_ENV, Compiled, Unsupported

if TYPE_CHECKING:
    from karta.jq.fastpath.driver import compile_node, run_paths

__all__ = ["EMPTY_ENV", "Compiled", "JqFail", "Unsupported", "compile_node", "run_paths"]

# The compiler (the driver and every node's module, the builtin table) is imported when first
# used: a command whose expressions all come from the definition cache never compiles one.
_EXPORTS = {"compile_node": "karta.jq.fastpath.driver", "run_paths": "karta.jq.fastpath.driver"}
__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())
