"""The measuring side of ``bench/catalog.py``: one process per measured checkout, never run by hand.

Started as ``python bench/catalog_probe.py WORK.json`` with ``PYTHONPATH=<checkout>/src``, so the
``karta`` it imports is that checkout's. It therefore uses only library APIs that every measured
revision has (87b02d4 included): ``karta.catalog.catalog_by_gvk``, ``karta.extract.ComponentFactory``
(``component(name).extracted_instances()``, ``root().status()``), ``karta.gang.compute_gang_plan``
and ``karta.jq.Evaluator(trusted=True)`` (``decoded=True`` where the revision has it); nothing of
``bench/catalog.py`` is imported here.

``WORK.json`` holds the objects: ``{"objects": {"group|version|Kind": [object, ...]}, "mix":
[["group|version|Kind", index], ...], "gc_threshold": N or null}`` (the collector's first threshold,
set before anything is imported: ``kli``'s, or null for Python's). The probe imports the library's
evaluation modules once, says ``{"ready": ...}`` on stdout, then answers one JSON line per command
read from stdin. Each command runs in a child forked for it: the child starts with the library
imported and nothing built for any definition (no definition loaded, no expression parsed, no code
generated), which is the state of a ``kli`` process after its imports. So the child's first pass
pays what a command pays on its first objects (reading the definition, parsing, building the
generated code), and its later passes are the steady state of a long-running process. Commands:

* ``{"op": "gvks", "keys": [...]}``: which keys resolve to a built-in definition here;
* ``{"op": "definition", "key": K, "mode": M, "min_time": S}``: resolve K (timed: ``load_ms``),
  one pass over K's objects (``first_object_us``, ``first_pass_us``), two warm-up passes, then
  passes until ``min_time`` seconds (at least 3): ``steady_us`` is their median per object;
* ``{"op": "mix", "mode": M, "count": N, "min_time": S}``: resolve every key of the mix (timed),
  then N objects cycled over the mix (each evaluated with the definition of its GVK): the first
  pass and the steady passes in objects per second.

Modes: ``status`` (the root component's status), ``full`` (every component's extracted instances:
ids, pod templates / pod specs / metadata / fragments and scale; the root status; the gang plan:
``bench/run.py``'s full extraction) and ``gang`` (the gang plan alone). Every answer carries the
child's peak RSS (``rss_mb``) and the number of objects that raised (``errors``, with the first
message), which are timed like the others.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pkgutil
import resource
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

Key = str
Run = Callable[[Any, Any, Any], Any]

# Library packages a catalog evaluation uses, imported in full before any child is forked, so that
# no child pays for a module import the others do not (kli's own start-up is bench/offline.py's).
PRELOAD = ("karta.jq", "karta.model", "karta.status", "karta.extract", "karta.gang", "karta.catalog")


def _preload() -> None:
    import karta

    for name in ("karta._codegen", "karta._records", "karta._identity"):
        with contextlib.suppress(ImportError):  # an older checkout without that module
            importlib.import_module(name)
    for package_name in PRELOAD:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            if info.name.endswith("__main__") or not info.name.startswith(karta.__name__):
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # an optional module (a missing extra) is simply not preloaded
                continue


def _modes() -> dict[str, Run]:
    from karta.extract import ComponentFactory
    from karta.gang import compute_gang_plan

    def status(karta: Any, obj: Any, evaluator: Any) -> Any:
        return ComponentFactory(karta, obj, evaluator=evaluator).root().status()

    def full(karta: Any, obj: Any, evaluator: Any) -> Any:
        factory = ComponentFactory(karta, obj, evaluator=evaluator)
        components = {c.name: factory.component(c.name).extracted_instances() for c in karta.components}
        status = factory.root().status()
        plan = compute_gang_plan(factory, (), evaluator=evaluator)
        return components, status, plan

    def gang(karta: Any, obj: Any, evaluator: Any) -> Any:
        factory = ComponentFactory(karta, obj, evaluator=evaluator)
        return compute_gang_plan(factory, (), evaluator=evaluator)

    return {"status": status, "full": full, "gang": gang}


def _evaluator(evaluator_class: Any) -> Any:
    """A trusted evaluator as kli, the web view and the controller run it: on a revision whose
    ``Evaluator`` takes ``decoded`` (objects whose numbers beyond 2**53 their decoder converted,
    karta.definitions.POOL), that one; the bench's objects stand for decoded ones."""
    try:
        return evaluator_class(trusted=True, decoded=True)
    except TypeError:  # a revision before the option
        return evaluator_class(trusted=True)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def _resolve(key: Key) -> Any:
    from karta.catalog import catalog_by_gvk

    group, version, kind = key.split("|")
    return catalog_by_gvk(group, version, kind)


class _Errors:
    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None

    def call(self, run: Run, karta: Any, obj: Any, evaluator: Any) -> None:
        try:
            run(karta, obj, evaluator)
        except Exception as exc:
            self.count += 1
            if self.first is None:
                self.first = f"{type(exc).__name__}: {exc}"[:300]


def _definition(work: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
    from karta.jq import Evaluator

    key = command["key"]
    run = _modes()[command["mode"]]
    objects = work["objects"][key]
    clock = time.perf_counter
    start = clock()
    karta = _resolve(key)
    load = clock() - start
    if karta is None:
        return {"absent": True}
    evaluator = _evaluator(Evaluator)
    errors = _Errors()
    first: list[float] = []
    for obj in objects:
        start = clock()
        errors.call(run, karta, obj, evaluator)
        first.append(clock() - start)
    for _ in range(2):
        for obj in objects:
            errors.call(run, karta, obj, evaluator)
    samples: list[float] = []
    began = clock()
    while len(samples) < 3 or clock() - began < command["min_time"]:
        start = clock()
        for obj in objects:
            errors.call(run, karta, obj, evaluator)
        samples.append((clock() - start) / len(objects))
    return {
        "load_ms": load * 1e3,
        "first_object_us": first[0] * 1e6,
        "first_pass_us": sum(first) / len(first) * 1e6,
        "steady_us": statistics.median(samples) * 1e6,
        "errors": errors.count,
        "error": errors.first,
        "rss_mb": _rss_mb(),
    }


def _mix(work: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
    from karta.jq import Evaluator

    run = _modes()[command["mode"]]
    clock = time.perf_counter
    start = clock()
    definitions = {key: _resolve(key) for key, _ in work["mix"]}
    load = clock() - start
    absent = sorted(key for key, karta in definitions.items() if karta is None)
    if absent:
        return {"absent": absent}
    pool = [(key, work["objects"][key][index]) for key, index in work["mix"]]
    items = [pool[i % len(pool)] for i in range(command["count"])]
    evaluator = _evaluator(Evaluator)
    errors = _Errors()

    def one_pass() -> float:
        start = clock()
        for key, obj in items:
            errors.call(run, definitions[key], obj, evaluator)
        return clock() - start

    first = one_pass()
    samples: list[float] = []
    began = clock()
    while len(samples) < 2 or clock() - began < command["min_time"]:
        samples.append(one_pass())
    return {
        "load_ms": load * 1e3,
        "first_per_s": len(items) / first,
        "steady_per_s": len(items) / statistics.median(samples),
        "errors": errors.count,
        "error": errors.first,
        "rss_mb": _rss_mb(),
    }


def _gvks(command: dict[str, Any]) -> dict[str, Any]:
    return {"present": [key for key in command["keys"] if _resolve(key) is not None]}


def _forked(work: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
    """Run one command in a child forked from this (imported, never evaluating) process."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, write one JSON document, exit without cleanup
        os.close(read_end)
        try:
            op = command["op"]
            if op == "definition":
                answer = _definition(work, command)
            elif op == "mix":
                answer = _mix(work, command)
            elif op == "gvks":
                answer = _gvks(command)
            else:
                answer = {"failed": f"unknown op {op!r}"}
        except BaseException:
            answer = {"failed": traceback.format_exc()}
        with os.fdopen(write_end, "w") as out:
            json.dump(answer, out)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else {"failed": "the measuring child died without an answer"}


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        work = json.load(handle)
    if work.get("gc_threshold"):  # kli's: set before the library is imported, as karta.cli.entry does
        import gc

        gc.set_threshold(work["gc_threshold"])
    import karta

    _preload()
    print(json.dumps({"ready": True, "karta": karta.__file__, "rss_mb": _rss_mb()}), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(_forked(work, json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
