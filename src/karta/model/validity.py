"""The validator's findings per definition object, and :func:`validate_or_raise`.

Owns the cache of findings keyed by definition identity (Kartas are immutable): build_tree
validates before every workload, and ``kli get`` resolves thousands of workloads with a handful of
definitions. Weak: an entry goes with its definition. The validator itself
(:mod:`karta.model.validate`, which parses and safety-checks every expression) is imported only
when a definition is not known yet, so a command on a built-in definition (known valid:
:func:`mark_valid`) never loads it.
"""

from __future__ import annotations

from karta._identity import WeakIdentityCache
from karta.errors import ValidationError
from karta.model.findings import Finding
from karta.model.types import Karta

__all__ = ["mark_valid", "validate_or_raise"]


def _validate(karta: Karta | None) -> list[Finding]:
    from karta.model.validate import validate_karta

    return validate_karta(karta)


_findings: WeakIdentityCache[Karta, list[Finding]] = WeakIdentityCache(_validate, size=1024)


def _cached_findings(karta: Karta | None) -> list[Finding]:
    if karta is None:
        return _validate(karta)
    return list(_findings(karta))


def mark_valid(karta: Karta) -> None:
    """Record that ``karta`` has no findings without running the validator: for the built-in
    catalog's definitions, which ``tests/catalog`` validates strictly with zero findings (or which
    the catalog validated when it read them), so that ``kli inspect`` and the other commands on
    one object do not parse and safety-check every expression of a built-in again."""
    _findings.seed(karta, [])


def validate_or_raise(karta: Karta | None) -> list[Finding]:
    """Validate; raise :class:`ValidationError` (``invalid karta: ...``) on errors, else return warnings."""
    findings = _cached_findings(karta)
    errors = [f for f in findings if f.is_error]
    if errors:
        raise ValidationError("invalid karta: " + "\n".join(f.message for f in errors), findings=list(errors))
    return findings
