"""Structured logs: one line per record, ``json`` (the default, for log collectors) or ``text``.

Records carry the object they are about as ``key`` (``namespace/name`` or ``name``) and the
controller as ``controller`` when given through ``extra``; every other ``extra`` field is kept.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["LOGGER_NAME", "configure", "logger"]

LOGGER_NAME: Final = "karta.controller"

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        doc.update(_fields(record))
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        extra = " ".join(f"{k}={v}" for k, v in _fields(record).items())
        line = f"{stamp} {record.levelname:<5} {record.getMessage()}"
        if extra:
            line += " " + extra
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(fmt: str = "json", level: str = "info", *, fields: Mapping[str, str] | None = None) -> None:
    """Send the controller's records (and the library's warnings) to stderr in ``fmt``; ``fields``
    are added to every record (the admission child's ``role=admission``, on the same stderr)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    if fields:
        constant = dict(fields)

        def add_fields(record: logging.LogRecord) -> bool:
            for key, value in constant.items():
                setattr(record, key, value)
            return True

        handler.addFilter(add_fields)
    root = logging.getLogger(LOGGER_NAME)
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def logger(name: str = "") -> logging.Logger:
    """The logger of one part of the controller (``karta.controller.<name>``)."""
    return logging.getLogger(f"{LOGGER_NAME}.{name}" if name else LOGGER_NAME)
