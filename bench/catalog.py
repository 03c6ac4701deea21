"""Every catalog definition on every corpus object of its kind, run on demand (never in the test
suite): ``.venv/bin/python bench/catalog.py [--baseline REV] [--quick] [--json FILE]``.

Objects: every document of ``../shared/corpus/workloads`` whose apiVersion and kind are the root GVK
of a built-in definition (``src/karta/catalog/data/*.yaml``). A definition with no corpus object
is measured on its lifecycle fixture instead (``tests/catalog/lifecycle/<name>.yaml``: the
fixture's object, then that object with each status of the first flow, with the flow's spec and
metadata changes), and marked ``fixture``; without either it is listed as not measured.

Three modes (``bench/catalog_probe.py`` says exactly what each calls): ``status`` (the root
status), ``full`` (every component's instances with their pod templates, pod specs, metadata,
fragments and scale, the root status and the gang plan: ``bench/run.py``'s full extraction) and
``gang`` (the gang plan alone). Each is measured, per definition, in a child process forked for it
from a process that has imported the library and built nothing (the state of a ``kli`` command
after its imports; a fresh process, not cleared caches, so no cache a revision adds can be
missed):

* ``1st obj``: the first object of the first pass, the definition just read (what one ``kli``
  command on one object pays, imports aside: ``bench/offline.py`` measures those);
* ``first pass``: the mean over one pass over the definition's objects in that child;
* ``steady``: after two warm-up passes, the median pass (at least 3, ``--min-time`` seconds),
  per object: a long-running process;
* ``load``: reading the definition (``catalog_by_gvk``), in ms, timed separately.

Then the mix (the issue's figure): ``--count`` objects (5,000) cycled over the corpus manifests,
each evaluated with the definition of its GVK (resolved once per GVK, timed as ``load``), first
pass and steady state in objects per second, and each side's peak RSS.

Code generation runs as users run it: ``KARTA_CODEGEN`` is set to ``on`` in the measuring
processes whatever the caller's environment says (``on`` generates a definition's code from the
second use; the test suite's ``eager,strict`` is not what a user runs). So does the cyclic garbage
collector: ``--gc kli`` (the default) sets its first threshold to ``kli``'s (``GC_THRESHOLD`` of
``karta.cli.entry``, 50,000, before the library is imported, as ``kli`` does; the same on both
sides), ``--gc default`` leaves Python's 700, where the first object of a child often pays a full
collection of the whole imported library (8-40 ms on this machine) that no ``kli`` command pays.

``--baseline REV`` also measures another commit in the same run: a temporary ``git worktree`` of
REV (removed at the end), run by the same interpreter with ``PYTHONPATH=<worktree>/src`` (the
dependencies are this environment's). The two sides alternate command by command (the order flips
each round), and every figure is the median over ``--rounds``; ratios are current / baseline time
(above 1: the current checkout is slower). ``--quick`` is one round, short steady runs and a mix of
1,000 objects; ``--json FILE`` writes every figure (``-`` for stdout).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT.parent / "shared" / "corpus"
CATALOG = ROOT / "src" / "karta" / "catalog" / "data"
FIXTURES = ROOT / "tests" / "catalog" / "lifecycle"
PROBE = HERE / "catalog_probe.py"
MODES = ("status", "full", "gang")
MODE_TITLES = {
    "status": "status only",
    "full": "full extraction (instances, pod templates, scale, status, gang plan)",
    "gang": "gang plan",
}
FIXTURE_OBJECTS = 8  # at most this many objects from a lifecycle fixture


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader that keeps timestamps as strings, as the API server sends them (JSON)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Loader.yaml_implicit_resolvers.items()
}


# --- objects -------------------------------------------------------------------------------------


@dataclass
class Definition:
    """One catalog definition and the objects it is measured on."""

    slug: str
    key: str  # "group|version|Kind", the root GVK
    source: str  # "corpus", "fixture" or "none"
    objects: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # where each object comes from


def gvk_key(group: str, version: str, kind: str) -> str:
    return f"{group}|{version}|{kind}"


def object_key(doc: dict[str, Any]) -> str | None:
    """The GVK key of a manifest, or None when it has no string apiVersion and kind."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    return gvk_key(group, version, kind)


def _documents(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as handle:
        return [doc for doc in yaml.load_all(handle, Loader=_Loader) if isinstance(doc, dict)]


def catalog_keys(catalog: Path = CATALOG) -> dict[str, str]:
    """Slug -> root GVK key of every catalog definition, read from its YAML (no karta import, so the
    same reading serves any checkout)."""
    out = {}
    for path in sorted(catalog.glob("*.yaml")):
        (doc,) = _documents(path)
        gvk = doc["spec"]["structureDefinition"]["rootComponent"]["kind"]
        out[doc["metadata"]["name"]] = gvk_key(gvk.get("group") or "", gvk["version"], gvk["kind"])
    return out


def corpus_documents(corpus: Path = CORPUS) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file#index`` under workloads/, document) for every manifest of the corpus, sorted by file."""
    workloads = corpus / "workloads"
    for path in sorted(workloads.rglob("*.yaml")):
        for index, doc in enumerate(_documents(path)):
            yield f"{path.relative_to(workloads)}#{index}", doc


def _merge(base: Any, patch: Any) -> Any:
    """The lifecycle fixtures' deep merge: maps merge, lists and scalars replace, null deletes."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(base)
    for name, value in patch.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = _merge(out.get(name), value)
    return out


def fixture_objects(path: Path) -> list[dict[str, Any]]:
    """The fixture's object, then that object at each step of the first flow that sets a status
    (the flow's spec and metadata changes applied), at most :data:`FIXTURE_OBJECTS`."""
    (doc,) = _documents(path)
    base = doc["object"]
    objects = [copy.deepcopy(base)]
    current = copy.deepcopy(base)
    flows = doc.get("flows") or []
    for step in flows[0]["steps"] if flows else []:
        for part in ("spec", "metadata"):
            if part in step:
                current = {**current, part: _merge(current.get(part), step[part])}
        if isinstance(step.get("status"), dict):
            objects.append({**copy.deepcopy(current), "status": copy.deepcopy(step["status"])})
    return objects[:FIXTURE_OBJECTS]


def discover(corpus: Path = CORPUS, catalog: Path = CATALOG, fixtures: Path = FIXTURES) -> list[Definition]:
    """Every catalog definition with the objects it is measured on (see the module docstring)."""
    definitions = {key: Definition(slug, key, "none") for slug, key in catalog_keys(catalog).items()}
    if corpus.is_dir():
        for where, doc in corpus_documents(corpus):
            definition = definitions.get(object_key(doc) or "")
            if definition is not None:
                definition.source = "corpus"
                definition.objects.append(doc)
                definition.files.append(where)
    for definition in definitions.values():
        fixture = fixtures / f"{definition.slug}.yaml"
        if definition.source == "none" and fixture.is_file():
            definition.source = "fixture"
            definition.objects = fixture_objects(fixture)
            definition.files = [f"{fixture.relative_to(ROOT)}#{i}" for i in range(len(definition.objects))]
    return sorted(definitions.values(), key=lambda d: d.slug)


KLI_GC_THRESHOLD = 50_000  # karta.cli.entry.GC_THRESHOLD (not imported: a baseline may lack it)


def work_document(definitions: Sequence[Definition], gc_threshold: int | None = None) -> dict[str, Any]:
    """What each probe reads: the objects per key, the mix (corpus objects only, in file order) and
    the garbage collector's first threshold (None: Python's default)."""
    return {
        "gc_threshold": gc_threshold,
        "objects": {d.key: d.objects for d in definitions if d.objects},
        "mix": [[d.key, i] for d in definitions if d.source == "corpus" for i in range(len(d.objects))],
    }


# --- the measuring processes -----------------------------------------------------------------------


class Side:
    """One checkout's probe process (bench/catalog_probe.py under PYTHONPATH=<src>)."""

    def __init__(self, name: str, src: Path, work: Path) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(src), "KARTA_CODEGEN": "on"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.process = subprocess.Popen(
            [sys.executable, str(PROBE), str(work)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )
        hello = self._read()
        karta = Path(hello["karta"]).resolve()
        if not karta.is_relative_to(src.resolve()):
            raise SystemExit(f"{name}: the probe imported {karta}, not the checkout at {src}")
        self.rss_mb: float = hello["rss_mb"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: the measuring process exited (see its error above)")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        answer = self._read()
        if "failed" in answer:
            raise SystemExit(f"{self.name}: {command}: {answer['failed']}")
        self.rss_mb = max(self.rss_mb, answer.get("rss_mb", 0.0))
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


class BaselineWorktree:
    """A temporary detached ``git worktree`` of REV, removed on exit."""

    def __init__(self, rev: str) -> None:
        self.rev = rev
        self.path = Path(tempfile.mkdtemp(prefix="karta-bench-base-")) / "tree"

    def __enter__(self) -> Path:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(self.path), self.rev],
            check=True,
            capture_output=True,
            text=True,
        )
        return self.path

    def __exit__(self, *exc: object) -> None:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.path)],
            check=False,
            capture_output=True,
        )
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False, capture_output=True)
        if self.path.parent.is_dir() and not self.path.exists():
            self.path.parent.rmdir()


def _rev(rev: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


# --- running and reporting ---------------------------------------------------------------------------


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def measure(
    sides: Sequence[Side],
    definitions: Sequence[Definition],
    *,
    modes: Sequence[str],
    rounds: int,
    min_time: float,
    count: int,
) -> dict[str, Any]:
    """Every figure, the median over rounds, per side; the sides alternate command by command."""
    measured = [d for d in definitions if d.objects]
    present = {
        s.name: set(s.ask({"op": "gvks", "keys": [d.key for d in measured]})["present"]) for s in sides
    }
    mix_keys = {d.key for d in measured if d.source == "corpus"}
    common_mix = all(mix_keys <= present[s.name] for s in sides)
    raw: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    notes: dict[tuple[str, str, str], str] = {}
    for round_index in range(rounds):
        order = list(sides) if round_index % 2 == 0 else list(reversed(sides))
        for mode in modes:
            for definition in measured:
                for side in order:
                    if definition.key not in present[side.name]:
                        continue
                    command = {"op": "definition", "key": definition.key, "mode": mode, "min_time": min_time}
                    _collect(raw, notes, (side.name, definition.slug, mode), side.ask(command))
            for side in order:
                if common_mix:
                    command = {"op": "mix", "mode": mode, "count": count, "min_time": min_time * 4}
                    _collect(raw, notes, (side.name, "(mix)", mode), side.ask(command))
        print(f"round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
    figures: dict[str, Any] = {}
    for (side_name, slug, mode), values in raw.items():
        entry: dict[str, Any] = {name: _median(vs) for name, vs in values.items()}
        if (side_name, slug, mode) in notes:
            entry["error"] = notes[side_name, slug, mode]
        figures.setdefault(side_name, {}).setdefault(slug, {})[mode] = entry
    return {
        "figures": figures,
        "present": {name: sorted(keys) for name, keys in present.items()},
        "mix_measured": common_mix,
        "rss_mb": {s.name: s.rss_mb for s in sides},
    }


def _collect(
    raw: dict[tuple[str, str, str], dict[str, list[float]]],
    notes: dict[tuple[str, str, str], str],
    where: tuple[str, str, str],
    answer: dict[str, Any],
) -> None:
    values = raw.setdefault(where, {})
    for name, value in answer.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            values.setdefault(name, []).append(float(value))
    if answer.get("error"):
        notes[where] = f"{answer.get('errors')} object(s) raised, first: {answer['error']}"


def _num(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def _ratio(current: float | None, baseline: float | None) -> str:
    if current is None or baseline is None or baseline == 0:
        return f"{'-':>7}"
    return f"{current / baseline:>6.2f}x"


def report(
    result: dict[str, Any],
    definitions: Sequence[Definition],
    *,
    modes: Sequence[str],
    sides: Sequence[str],
    count: int,
) -> list[str]:
    """The tables, as lines: per mode, per definition (us per object); then the mix."""
    figures = result["figures"]
    two = len(sides) == 2
    lines: list[str] = []
    columns = ("steady", "first pass", "1st obj")
    names = ("steady_us", "first_pass_us", "first_object_us")
    for mode in modes:
        lines.append("")
        lines.append(f"== {MODE_TITLES[mode]}: us per object" + (" (current / baseline)" if two else ""))
        head = f"{'definition':<46}{'objs':>5} "
        for column in columns:
            head += f"| {column:>9}" + (f"{'base':>9}{'ratio':>7} " if two else " ")
        head += f"| {'load ms':>8}" + (f"{'base':>7}" if two else "")
        lines.append(head)
        for definition in definitions:
            tag = "" if definition.source == "corpus" else f" [{definition.source}]"
            row = f"{definition.slug + tag:<46}{len(definition.objects):>5} "
            if not definition.objects:
                lines.append(row + "| not measured: no corpus object and no lifecycle fixture")
                continue
            current = figures.get(sides[0], {}).get(definition.slug, {}).get(mode, {})
            baseline = figures.get(sides[1], {}).get(definition.slug, {}).get(mode, {}) if two else {}
            for name in names:
                row += f"| {_num(current.get(name), 9)}"
                if two:
                    row += f"{_num(baseline.get(name), 9)}{_ratio(current.get(name), baseline.get(name))} "
                else:
                    row += " "
            row += f"| {_num(current.get('load_ms'), 8)}" + (_num(baseline.get("load_ms"), 7) if two else "")
            lines.append(row)
            for side in sides:
                error = figures.get(side, {}).get(definition.slug, {}).get(mode, {}).get("error")
                if error:
                    lines.append(f"    {side}: {error}")
    lines.append("")
    if not result["mix_measured"]:
        lines.append("== mix: not measured (a side lacks a definition of the corpus's kinds)")
        return lines
    manifests = sum(len(d.objects) for d in definitions if d.source == "corpus")
    kinds = sum(1 for d in definitions if d.source == "corpus")
    lines.append(
        f"== mix: {count} objects cycled over {manifests} corpus manifests ({kinds} definitions), objects/s"
        + (" (time ratio current / baseline)" if two else "")
    )
    head = f"{'mode':<10}| {'steady':>9}" + (f"{'base':>9}{'ratio':>7} " if two else " ")
    head += f"| {'first':>9}" + (f"{'base':>9}{'ratio':>7} " if two else " ")
    head += f"| {'load ms':>8}" + (f"{'base':>7} " if two else " ") + f"| {'peak RSS MB':>11}"
    lines.append(head + (f"{'base':>7}" if two else ""))
    for mode in modes:
        current = figures.get(sides[0], {}).get("(mix)", {}).get(mode, {})
        baseline = figures.get(sides[1], {}).get("(mix)", {}).get(mode, {}) if two else {}
        row = f"{mode:<10}"
        for name in ("steady_per_s", "first_per_s"):
            row += f"| {_num(current.get(name), 9, 0)}"
            if two:  # a time ratio: baseline throughput over current throughput
                row += f"{_num(baseline.get(name), 9, 0)}{_ratio(baseline.get(name), current.get(name))} "
            else:
                row += " "
        row += f"| {_num(current.get('load_ms'), 8)}" + (
            f"{_num(baseline.get('load_ms'), 7)} " if two else " "
        )
        row += f"| {_num(current.get('rss_mb'), 11)}" + (_num(baseline.get("rss_mb"), 7) if two else "")
        lines.append(row)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", metavar="REV", help="also measure this commit, in the same run")
    parser.add_argument("--quick", action="store_true", help="one round, short steady runs, 1,000 objects")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3; --quick: 1)")
    parser.add_argument("--min-time", type=float, default=None, help="s per steady run (default 0.2)")
    parser.add_argument("--count", type=int, default=None, help="objects in the mix (default 5000)")
    parser.add_argument("--mode", action="append", choices=MODES, help="measure only this mode (repeatable)")
    parser.add_argument("--only", action="append", metavar="TEXT", help="definitions whose name has TEXT")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"the shared corpus (default {CORPUS})")
    parser.add_argument(
        "--gc", choices=("kli", "default"), default="kli", help="the GC threshold: kli's or Python's"
    )
    parser.add_argument("--json", metavar="FILE", help="write every figure as JSON ('-': stdout)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    min_time = args.min_time if args.min_time is not None else (0.05 if args.quick else 0.2)
    count = args.count or (1000 if args.quick else 5000)
    modes = tuple(args.mode or MODES)
    if not args.corpus.is_dir():
        print(f"the shared corpus is not at {args.corpus} (--corpus)", file=sys.stderr)
        return 2
    definitions = discover(args.corpus)
    if args.only:
        definitions = [d for d in definitions if any(text in d.slug for text in args.only)]
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    current_name = f"current ({head or 'working tree'})"
    with tempfile.TemporaryDirectory(prefix="karta-bench-") as scratch:
        work = Path(scratch) / "work.json"
        threshold = KLI_GC_THRESHOLD if args.gc == "kli" else None
        work.write_text(json.dumps(work_document(definitions, threshold)))
        sides: list[Side] = []
        baseline_tree = BaselineWorktree(args.baseline) if args.baseline else None
        try:
            sides.append(Side(current_name, ROOT / "src", work))
            if baseline_tree is not None:
                tree = baseline_tree.__enter__()
                sides.append(Side(f"baseline ({_rev(args.baseline)})", tree / "src", work))
            result = measure(sides, definitions, modes=modes, rounds=rounds, min_time=min_time, count=count)
        finally:
            for side in sides:
                side.close()
            if baseline_tree is not None:
                baseline_tree.__exit__()
    names = [s.name for s in sides]
    print(f"KARTA_CODEGEN=on, {rounds} round(s), steady >= {min_time}s per figure; sides: {', '.join(names)}")
    for line in report(result, definitions, modes=modes, sides=names, count=count):
        print(line)
    print(f"\npeak RSS of any measuring child (MB): {', '.join(f'{s.name} {s.rss_mb:.1f}' for s in sides)}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        document = {
            "sides": names,
            "rounds": rounds,
            "min_time_s": min_time,
            "count": count,
            "definitions": [
                {"name": d.slug, "gvk": d.key.split("|"), "source": d.source, "objects": d.files}
                for d in definitions
            ],
            **result,
        }
        text = json.dumps(document, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
