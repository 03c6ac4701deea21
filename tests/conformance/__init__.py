"""Conformance suite: the cases of karta-format.md section 20 (and the [fix] cases) as data."""
