"""Every catalog status definition's generated function goes into the definition cache of
karta._codegen (every constant has a recipe) and, read back without generating, returns on every
lifecycle step exactly what the freshly generated function returns (which
test_generated_share.py compares with the general code on libjq)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_generated_share import _status_cases

from karta import _codegen
from karta.status import extract as status_extract
from karta.status import generated as status_generated


def test_cached_status_functions_agree_with_generated_ones_on_every_lifecycle_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catalog_view import evaluator

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _codegen.use_disk_cache(True)
    try:
        cases = _status_cases()
        assert len(cases) > 500
        generated: dict[int, Any] = {}
        keys: set[str | None] = set()
        for _where, definition, _obj in cases:
            if id(definition) not in generated:
                compiled = status_extract._CompiledStatus(definition)  # eager: generated, then kept
                generated[id(definition)] = (definition, compiled.status_fn())
                keys.add(compiled.key)
        directory = _codegen.cache_directory()
        assert directory is not None and len(generated) >= 36
        # every definition kept (definitions of the same content share one entry)
        assert {path.stem for path in directory.glob("*.def")} == keys

        def refuse(*_: Any, **__: Any) -> Any:
            raise AssertionError("generated although the definition cache holds the function")

        monkeypatch.setattr(status_generated, "_build", refuse)
        loaded = {key: status_extract._CompiledStatus(d).status_fn() for key, (d, _fn) in generated.items()}
        ev = evaluator()
        for where, definition, obj in cases:
            fresh, cached = generated[id(definition)][1], loaded[id(definition)]
            assert fresh is not None and cached is not None and cached is not fresh, where
            want, got = fresh(obj, ev.max_results), cached(obj, ev.max_results)
            assert (got is None) == (want is None), where
            if want is not None:
                assert got.to_dict() == want.to_dict(), where
                assert (got.diagnostics, got.stale) == (want.diagnostics, want.stale), where
    finally:
        _codegen.use_disk_cache(True)
        _codegen._disk_cache = None
