"""Ages as kubectl prints them (``HumanDuration``): ``45s``, ``3m12s``, ``5h``, ``2d3h``, ``3y``."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from karta import report

__all__ = ["human_age"]


def human_age(created: Any, *, now: _dt.datetime | None = None) -> str:
    """kubectl's short human duration of ``now - created`` (an RFC 3339 text or a datetime);
    ``<unknown>`` without a timestamp, ``<invalid>`` for one in the future."""
    moment = report.parse_time(created)
    if moment is None:
        return "<unknown>"
    seconds = int(((now or _dt.datetime.now(_dt.UTC)) - moment).total_seconds())
    if seconds < -1:
        return "<invalid>"
    seconds = max(seconds, 0)
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"
