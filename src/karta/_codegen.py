"""Generated Python source: the one place that compiles and ``exec``s code karta generates.

The generators (jq expressions in :mod:`karta.jq.codegen`, extraction functions in
:mod:`karta.extract.compiled`, status functions in :mod:`karta.status.generated`, shape checkers in
:mod:`karta.extract.convert`, the syntax-tree ``__init__`` methods of :mod:`karta.jq.syntax`) hand
their source to :func:`compile_source`. It compiles the source under a unique file name
(``<karta-generated-N: what>``) and registers the text in :mod:`linecache`, so that tracebacks,
``pdb`` and ``inspect.getsource`` show the generated lines; the entry is dropped when the namespace
the code runs in is garbage-collected.

``KARTA_CODEGEN`` (read once, when this module is imported) is a comma-separated list of words:

* ``on`` (also unset or empty): generate code, from the second use of what it compiles (an
  expression, a definition's status or a component's extraction): the first use runs the general
  code, so that a command that evaluates a definition once (``kli inspect -f``, ``describe -f``,
  ``gang -f``: one object) does not pay for compiling code it runs once (:func:`due`);
* ``eager``: generate on the first use (the test suite runs this way, so that every use goes
  through the generated code);
* ``off``: generate nothing: every generator's own fallback runs instead (the fast-path closures,
  the general extraction and status code, the composed shape checkers, plain ``__init__``
  methods), with identical results;
* ``dump``: print every generated source to stderr as it is compiled, and every generation that
  failed or was declined (an expression outside the fast path, for one), with the reason;
* ``strict``: a generation that fails (an exception that is not a decline: a bug in a generator)
  raises instead of falling back; the test suite runs this way (``tests/conftest.py``). Without
  it the generator falls back to the general code, whose results are exact;
* ``nocache``: compile every source, never reading or writing the code cache below.

Unknown words are ignored, and named once on stderr.

A source beyond the limits of Python's compiler (100 nested ``if``, 100 nested ``//`` or ``if``
in a jq expression: ``too many levels of indentation``, ``too many statically nested blocks``, a
``RecursionError`` or ``MemoryError`` while compiling) raises :class:`Declined` here, at the one
place every generator compiles through; generators hand it to :func:`failed`, which reports it as
a decline, so the general code runs instead, also under ``strict``.

The code cache: what Python's compiler makes of a source depends on nothing but the source and
the interpreter, so :func:`compile_source` keeps the compiled code (``marshal``) on disk, keyed by
the SHA-256 of the source, under ``$XDG_CACHE_HOME/karta/codegen/<interpreter tag>/`` (default
``~/.cache/karta/codegen/``; :func:`cache_directory`). The same source in a later process (the
record and syntax-tree ``__init__`` methods every ``kli`` command builds, a definition's status and
extraction functions, the shape checkers) is then loaded instead of compiled, which is most of
what generating code costs. The key is the source itself, so a changed generator (a new
generator version, a fix) or a changed definition makes a new source and a new entry, and an old
entry is never used for it: there is no version to bump. The interpreter tag
(``sys.implementation.cache_tag`` and the bytecode magic number) keeps Python versions apart.

Only a sound entry is used: an entry is written to a temporary file and renamed into place (readers
never see half of one; concurrent writers write the same bytes), holds its length and the CRC-32 of
its payload (checked before ``marshal`` reads it: a truncated or corrupt entry is a miss, and is
rewritten; a checksum against damage, not a signature: nobody else can write the entry, see below,
and a SHA-256 of the payload was a quarter of a first pass's cost), and is read only from a
directory and file that belong to the user and that nobody else may write (``0700`` directories,
``0600`` files, not followed through symbolic links); anything else is a miss and the source is
compiled. A directory that cannot be created or written (read-only home, no home) only means
compiling, as without the cache. Clear it with ``rm -rf
~/.cache/karta/codegen``; turn it off with ``KARTA_CODEGEN=nocache``. The controller turns it off
(:func:`use_disk_cache`): its definitions come from API users, and it builds each source once per
process in memory anyway.
"""

from __future__ import annotations

import contextlib
import itertools
import linecache
import marshal
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG as _S_ISREG
from types import CodeType
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from zlib import crc32 as _crc32

__all__ = [
    "MODE",
    "Declined",
    "Mode",
    "cache_directory",
    "compile_source",
    "declined",
    "due",
    "enabled",
    "failed",
    "parse_mode",
    "use_disk_cache",
]

_WORDS: Final = ("on", "off", "dump", "strict", "eager", "nocache")


class Mode(NamedTuple):
    """The meaning of one ``KARTA_CODEGEN`` value (see the module docstring)."""

    generate: bool
    dump: bool
    strict: bool
    unknown: tuple[str, ...]
    eager: bool = False
    cache: bool = True


def parse_mode(value: str) -> Mode:
    """The :class:`Mode` of a ``KARTA_CODEGEN`` value."""
    words = [w.strip().lower() for w in value.split(",") if w.strip()]
    unknown = tuple(w for w in words if w not in _WORDS)
    return Mode(
        generate="off" not in words,
        dump="dump" in words,
        strict="strict" in words,
        unknown=unknown,
        eager="eager" in words,
        cache="nocache" not in words,
    )


MODE: Mode = parse_mode(os.environ.get("KARTA_CODEGEN", ""))
if MODE.unknown:
    print(
        f"karta: KARTA_CODEGEN: ignoring {', '.join(map(repr, MODE.unknown))} (known: {', '.join(_WORDS)})",
        file=sys.stderr,
    )

_numbers = itertools.count(1)

# What Python's compiler says when a source exceeds its own limits (not a bug in a generator).
_LIMIT_MESSAGES: Final = (
    "too many levels of indentation",
    "too many statically nested blocks",
    "too many nested parentheses",
    "too many nested",
    "too complex",
    "maximum recursion depth",
)


class Declined(Exception):
    """A generated source that Python cannot compile because of the compiler's own limits (nesting,
    indentation, recursion depth, memory): the generator falls back to its general code. Every
    generator reports it through :func:`failed`, which treats it as a decline, also under
    ``strict``."""


def enabled() -> bool:
    """False under ``KARTA_CODEGEN=off``: generators must then take their non-generated path."""
    return MODE.generate


def due(uses: int) -> bool:
    """Whether to generate code for something used ``uses`` times before (counted by the caller):
    from the second use (``uses >= 1``), or from the first under ``eager``. Before that the
    caller runs its general code, whose results are the same."""
    return uses >= 1 or MODE.eager


def due_for_cache(uses: int, key: str | None) -> bool:
    """:func:`due` for a definition's whole generated function whose definition cache entry was
    missed under ``key`` (None: the cache is off): with a writable cache it is generated on the
    first use too, since it is stored and every later process reads it instead of generating
    (a one-object ``kli`` command would otherwise never store it, and run the general code, with
    the jq compiler it imports, on every run)."""
    return uses >= 1 or MODE.eager or (key is not None and _writable)


_registered: dict[str, int] = {}  # live namespaces per file name (one source can be loaded twice)


class _Registration:
    """Drops the :mod:`linecache` entry of one generated source when the last namespace of that
    file name dies (a definition cache entry loaded twice has one name, :func:`run_code`)."""

    __slots__ = ("filename",)

    def __init__(self, filename: str) -> None:
        self.filename = filename
        _registered[filename] = _registered.get(filename, 0) + 1

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown linecache may be gone
            left = _registered.pop(self.filename, 1) - 1
            if left > 0:
                _registered[self.filename] = left
            else:
                linecache.cache.pop(self.filename, None)


def compile_source(source: str, namespace: dict[str, Any], *, what: str) -> CodeType:
    """Compile ``source`` and run it in ``namespace`` (which then holds what it defines); the
    code, for :func:`store_definition`.

    ``what`` names the code in its file name (``<karta-generated-N: what>``) and in dumps.
    """
    filename = _announce(source, what, "")
    code = _cached_compile(source, filename, what)
    _run(code, source, filename, namespace)
    return code


def _announce(source: str, what: str, note: str, filename: str = "") -> str:
    """The file name of generated ``source`` (``<karta-generated-N: what>``, unless ``filename``
    is given), dumped under ``KARTA_CODEGEN=dump`` with ``note`` after the name."""
    if not filename:
        label = " ".join(what.split())
        if len(label) > 80:
            label = label[:77] + "..."
        filename = f"<karta-generated-{next(_numbers)}: {label}>"
    if MODE.dump:
        print(f"# --- {filename}{note}\n{source}\n", file=sys.stderr)
    return filename


class _LazyLines(tuple[Any, ...]):
    """A :mod:`linecache` entry ``(size, None, lines, filename)`` whose lines are split from the
    source (held where the lines go) on the first read: most generated code never shows up in a
    traceback, and splitting the catalog's sources was a tenth of a first pass. Every read of the
    entry (``entry[2]``: :func:`linecache.getlines`; unpacking: :func:`linecache.checkcache`)
    puts the plain entry in its place and reads that."""

    __slots__ = ()

    def _plain(self) -> tuple[Any, ...]:
        size, mtime, source, filename = tuple.__iter__(self)
        plain = (size, mtime, source.splitlines(keepends=True), filename)
        if linecache.cache.get(filename) is self:
            linecache.cache[filename] = plain
        return plain

    def __getitem__(self, index: Any) -> Any:
        return self._plain()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._plain())


def _run(code: CodeType, source: str, filename: str, namespace: dict[str, Any]) -> None:
    """Run ``code`` in ``namespace`` with ``source`` in :mod:`linecache` under ``filename``
    (tracebacks show the generated lines) and registered for removal with the namespace."""
    linecache.cache[filename] = _LazyLines((len(source), None, source, filename))
    namespace["__karta_source__"] = _Registration(filename)
    exec(code, namespace)


def failed(what: str, exc: BaseException) -> None:
    """Report a generation that failed with ``exc`` (call it from the ``except`` block).

    Under ``strict`` it re-raises ``exc``; otherwise the caller falls back to its general code
    (``dump`` prints the traceback first). A :class:`Declined` is not a failure: it is reported as
    a decline and never raises.
    """
    if isinstance(exc, Declined):
        declined(what, exc)
        return
    if MODE.strict:
        raise exc
    if MODE.dump:
        import traceback

        text = "".join(traceback.format_exception(exc))
        print(f"# --- karta codegen: {what}: failed, falling back\n{text}", file=sys.stderr)


def declined(what: str, reason: object) -> None:
    """Report a generation declined on purpose (under ``dump`` only): not an error."""
    if MODE.dump:
        print(f"# --- karta codegen: {what}: declined ({reason})", file=sys.stderr)


def _compile(source: str, filename: str, what: str) -> CodeType:
    try:
        return compile(source, filename, "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:  # IndentationError is a SyntaxError
        if isinstance(exc, SyntaxError) and not any(m in str(exc.msg) for m in _LIMIT_MESSAGES):
            raise  # invalid source: a bug in the generator
        raise Declined(f"{what}: {type(exc).__name__}: {exc}") from exc


# --- the code cache (see the module docstring) --------------------------------------------------

# The entry format: magic, the payload's length (8 bytes) and CRC-32 (4 bytes, big-endian), payload.
_ENTRY_MAGIC: Final = b"karta-code-2\n"
_HEAD_SIZE: Final = len(_ENTRY_MAGIC) + 12
_SUFFIX: Final = ".code"

if TYPE_CHECKING:
    from hashlib import sha256 as _sha256
else:
    try:  # the interpreter's own SHA-256: hashlib would load OpenSSL (~3 ms of every kli start)
        from _sha256 import sha256 as _sha256
    except ImportError:  # another interpreter, or Python >= 3.12 (_sha2)
        from hashlib import sha256 as _sha256

_disk_cache: bool | None = None  # None: decided on the first use (use_disk_cache overrides)
_directory: Path | None = None  # the directory in use, once created and checked
_writable = True  # False once a write failed: the rest of the process only reads


def use_disk_cache(enabled: bool) -> None:
    """Turn the on-disk code cache on or off for this process (``KARTA_CODEGEN=nocache`` turns
    it off from the start); the controller turns it off."""
    global _disk_cache, _directory, _writable
    _disk_cache = enabled
    _directory = None
    _writable = True


def _interpreter_tag() -> str:
    try:  # what importlib.util re-exports, already loaded (importing importlib.util is ~0.5 ms)
        from importlib._bootstrap_external import MAGIC_NUMBER
    except ImportError:  # pragma: no cover - another interpreter
        from importlib.util import MAGIC_NUMBER

    # -O and -OO compile differently (asserts, docstrings): their code is kept apart too
    name = sys.implementation.cache_tag or sys.implementation.name
    return f"{name}-{MAGIC_NUMBER.hex()}-O{sys.flags.optimize}"


def cache_directory() -> Path | None:
    """The directory of the code cache for this interpreter, or None where there is no home to
    put it in (``$XDG_CACHE_HOME/karta/codegen/<tag>``, else ``~/.cache/karta/codegen/<tag>``).
    The path only: whether it is used is :func:`_usable_directory`'s decision."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        home = os.environ.get("HOME")
        if home is None:
            home = os.path.expanduser("~")  # the password database's
        if not home or not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base, "karta", "codegen", _interpreter_tag())


def _owned_and_private(st: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else (group and others)."""
    getuid = getattr(os, "getuid", None)
    return (getuid is None or st.st_uid == getuid()) and not st.st_mode & 0o022


def _usable_directory() -> Path | None:
    """The cache directory, created (``0700``) when missing, or None when the cache is off or the
    directory is not this user's alone (then nothing is read from it or written to it)."""
    global _disk_cache, _directory
    if _directory is not None:
        return _directory
    if _disk_cache is None:
        _disk_cache = MODE.cache and MODE.generate
    if not _disk_cache:
        return None
    directory = cache_directory()
    if directory is None:
        _disk_cache = False
        return None
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(directory, follow_symlinks=False)
    except OSError:  # a read-only or missing home: compile, as without the cache
        _disk_cache = False
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or not _owned_and_private(st):
        _disk_cache = False
        return None
    _directory = directory
    return directory


def _key(source: str) -> str:
    return _sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def _entry_path(directory: Path, key: str) -> Path:
    return directory / f"{key}{_SUFFIX}"


def _read_entry(path: Path) -> CodeType | None:
    """The code of a sound entry, or None (missing, not private, truncated, corrupt, foreign)."""
    code = _read_data(path)
    return code if isinstance(code, CodeType) else None


def _read_data(path: Path) -> Any:
    """What a sound entry's payload holds (marshal), or None."""
    payload = _read_payload(path)
    if payload is None:
        return None
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None


_READ_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_payload(path: Path) -> memoryview | None:
    """The verified payload of a sound entry, or None (missing, not private, truncated, corrupt)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if not _S_ISREG(st.st_mode) or not _owned_and_private(st) or size > 64 << 20:
            return None
        data = os.read(fd, size)  # a regular file: one read returns it whole (a short read is a miss)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != size or size < _HEAD_SIZE or not data.startswith(_ENTRY_MAGIC):
        return None
    head = len(_ENTRY_MAGIC)
    length = int.from_bytes(data[head : head + 8], "big")
    payload = memoryview(data)[_HEAD_SIZE:]
    if length != len(payload) or _crc32(payload) != int.from_bytes(data[head + 8 : _HEAD_SIZE], "big"):
        return None
    return payload


def _create_temporary(directory: Path) -> tuple[int, Path]:
    """A new private file in ``directory`` (``0600``), opened for writing: (descriptor, path).
    Not :mod:`tempfile`, which imports ``shutil`` and ``random`` into every ``kli`` start."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    path = directory / f".tmp-{os.getpid()}-{os.urandom(8).hex()}{_SUFFIX}"
    return os.open(path, flags, 0o600), path


def _write_entry(directory: Path, path: Path, code: CodeType) -> None:
    """Write the entry of ``code`` atomically (a temporary file renamed into place)."""
    _write_payload(directory, path, marshal.dumps(code))


def _write_payload(directory: Path, path: Path, payload: bytes) -> None:
    """Write an entry holding ``payload`` atomically (a temporary file renamed into place)."""
    global _writable
    data = _ENTRY_MAGIC + len(payload).to_bytes(8, "big") + _crc32(payload).to_bytes(4, "big") + payload
    try:
        fd, temporary = _create_temporary(directory)
    except OSError:
        _writable = False  # a read-only directory: keep reading what is there
        return
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except OSError:
        _writable = False
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _renamed(code: CodeType, filename: str) -> CodeType:
    """``code`` and the code objects it holds (nested functions) under ``filename``."""
    consts = code.co_consts
    if any(isinstance(c, CodeType) for c in consts):
        consts = tuple(_renamed(c, filename) if isinstance(c, CodeType) else c for c in consts)
        return code.replace(co_filename=filename, co_consts=consts)
    return code.replace(co_filename=filename)


def _cached_compile(source: str, filename: str, what: str) -> CodeType:
    """``compile(source)``, loaded from the code cache when it holds the source's entry (then
    renamed to ``filename``), else compiled and written there."""
    directory = _usable_directory()
    if directory is None:
        return _compile(source, filename, what)
    path = _entry_path(directory, _key(source))
    code = _read_entry(path)
    if code is not None:
        return _renamed(code, filename)
    code = _compile(source, filename, what)  # a decline or a generator bug raises: nothing is written
    if _writable:
        _write_entry(directory, path, code)
    return code


# --- the definition cache: a whole generated function, without generating it ---------------------
#
# What :func:`compile_source` caches is the compiled source; generating the source (parsing the
# definition's jq, emitting the code) is paid by every process all the same. A generator whose
# output depends only on a definition's content stores, under a key made of that content
# (canonical JSON), the generator's fingerprint (karta._fingerprint, computed from the generators'
# sources when the package is built) and the interpreter tag (the directory), the compiled code
# together with a *recipe* for every object of its namespace. A recipe is plain data (marshal:
# None, bool, int, float, str, tuple, list, dict), never a pickled object: either a plain value,
# or a name the generator resolves again in this process (an enum member, an operator, a builtin,
# the fast-path closure of a jq text); see karta.jq.codegen.Emitter.restore. The entries share the
# directory and the format of the code cache above (private, verified, atomic).

_DEFINITION_SUFFIX: Final = ".def"


def definition_key(kind: str, content: object) -> str | None:
    """The cache key of a generated ``kind`` built from ``content`` (JSON-serialisable, canonical
    once sorted), or None when the definition cache is off."""
    if _usable_directory() is None:
        return None
    import json

    from karta._fingerprint import GENERATOR

    text = json.dumps([kind, GENERATOR, content], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _key(text)


def load_definition(key: str) -> tuple[CodeType, Any, str] | None:
    """The (code, recipes, source) stored under ``key``, or None (a miss: generate)."""
    directory = _usable_directory()
    if directory is None:
        return None
    entry = _read_data(directory / f"{key}{_DEFINITION_SUFFIX}")
    if entry.__class__ is not tuple or len(entry) != 3 or not isinstance(entry[0], CodeType):
        return None
    if entry[2].__class__ is not str:
        return None
    return entry[0], entry[1], entry[2]


def store_definition(key: str, code: CodeType, recipes: Any, source: str) -> None:
    """Keep (code, recipes, source) under ``key`` (``recipes``: plain data only, see above)."""
    directory = _usable_directory()
    if directory is None or not _writable:
        return
    try:
        payload = marshal.dumps((_renamed(code, _stored_name(key, code.co_filename)), recipes, source))
    except ValueError:  # not plain data: nothing is kept
        return
    _write_payload(directory, directory / f"{key}{_DEFINITION_SUFFIX}", payload)


def _stored_name(key: str, filename: str) -> str:
    """The file name of a definition cache entry's code: ``<karta-generated-KEY: what>`` (its key
    instead of the process's number), given when it is stored so that loading it renames
    nothing."""
    colon = filename.find(":")
    label = filename[colon:] if filename.startswith(_PREFIX) and colon > 0 else ">"
    return f"{_PREFIX}{key[:16]}{label}"


_PREFIX: Final = "<karta-generated-"


def run_code(code: CodeType, source: str, namespace: dict[str, Any], *, what: str) -> None:
    """Run loaded ``code`` in ``namespace`` as :func:`compile_source` runs what it compiles (the
    file name and the :mod:`linecache` entry of ``source``, for tracebacks): under the file name
    it was stored with (:func:`_stored_name`: unique per source), else a new one."""
    filename = code.co_filename
    if filename.startswith(_PREFIX) and filename.endswith(">"):
        _announce(source, what, " (from the definition cache)", filename)
    else:
        filename = _announce(source, what, " (from the definition cache)")
        code = _renamed(code, filename)
    _run(code, source, filename, namespace)
