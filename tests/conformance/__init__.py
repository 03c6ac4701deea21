"""Conformance suite: the cases of docs/spec/format.md#conformance (and the [fix] cases) as data."""
