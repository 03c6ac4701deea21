"""Kubernetes name rules: the syntax the validator checks (label keys and values, DNS labels and
subdomains) and the plural resource name guessed for a kind when no CRD or discovery says it.

Each check returns ``None`` when the text is valid, else the reason in the API server's words.
"""

from __future__ import annotations

import re

_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

_NAME_CHARSET = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def dns_label_error(text: str) -> str | None:
    """RFC 1123 label: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends."""
    if len(text) > 63:
        return "must be no more than 63 characters"
    if not _DNS_LABEL.fullmatch(text):
        return (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character"
        )
    return None


def dns_subdomain_error(text: str) -> str | None:
    """RFC 1123 subdomain: at most 253 characters of dot-separated DNS labels."""
    if len(text) > 253:
        return "must be no more than 253 characters"
    if not _DNS_SUBDOMAIN.fullmatch(text):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


def label_key_error(key: str) -> str | None:
    """A qualified name: ``[prefix/]name``, prefix a DNS subdomain, name at most 63 characters."""
    parts = key.split("/")
    if len(parts) > 2:
        return (
            "a qualified name must consist of a name part of alphanumeric characters, '-', '_' or '.', "
            "with an optional DNS subdomain prefix and '/'"
        )
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        reason = dns_subdomain_error(prefix)
        if reason is not None:
            return f"prefix part {reason}"
    else:
        name = parts[0]
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _LABEL_NAME.fullmatch(name):
        return f"name part {_NAME_CHARSET}"
    return None


def label_value_error(value: str) -> str | None:
    """A label value: empty, or at most 63 characters of the label-name charset."""
    if not value:
        return None
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_NAME.fullmatch(value):
        return f"a valid label value must be an empty string or {_NAME_CHARSET[len('must ') :]}"
    return None


def plural_guess(kind: str) -> str:
    """Lower-cased English plural, as kubectl's fallback does for unknown kinds."""
    word = kind.lower()
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"
