"""No bad input makes any ``kli`` command print a traceback (issue 5, "Feel").

Hypothesis builds command lines for every command from its click parameters: known options with
random and wrong values (unknown choices, negative or non-numeric limits, empty strings), unknown
flags, TYPE tokens with slashes, and files from a pool (missing, empty, a directory, binary and
random text, a huge YAML document, an alias bomb, wrong kinds, valid examples, standard input).
Everything runs in-process (``karta.cli.main.main(argv)``) without a cluster: no kubeconfig, no
service-account environment, ``HOME`` and the definitions directory isolated, and the only server
a line may name is a closed local port. Every run ends with a documented exit code and stderr
lines starting ``error:``, ``hint:`` or ``warning:``.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karta.cli.main import _COMMANDS, cli, main

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
CORPUS = REPO.parent / "shared" / "corpus"
EXIT_CODES = (0, 1, 2, 3, 4)

# connection flags that could reach a network: only harmless values
_CONNECTION_VALUES: dict[str, list[str]] = {
    "server": ["http://127.0.0.1:1", "https://127.0.0.1:1", "not a url", ""],
    "token": ["t", ""],
    "context": ["nope", ""],
    "request_timeout": ["1s", "0", "-1", "10x", "1m30s", "", "abc"],
}

TOKENS = [
    "",
    " ",
    "x",
    "-",
    "--",
    "/",
    "a/b",
    "a/b/c",
    "/name",
    "type/",
    "pytorchjob",
    "pytorchjobs/train-7",
    "PyTorchJob",
    "mpijob",
    "jobs.batch",
    "pytorchjobs.v1.kubeflow.org",
    "pods",
    "nosuchtype",
    "ml-team",
    "Running,Failed",
    "Bogus",
    "0",
    "-1",
    "99999999999999999999",
    "1.5",
    "kai",
    "kubeflow.org",
    "kubeflow-org-pytorchjob-v1",
    "ml/consumer",
    "a=b,c!=d",
    "==",
    "\u00e9\u00e8",
]
UNKNOWN_FLAGS = ["--nope", "-Z", "--output", "-o", "--all", "--help", "-h", "--version", "-A", "-f"]


AWKWARD = 24  # the first files of the pool; then come valid examples


def _file_pool(root: Path) -> list[str]:
    """Paths of awkward and ordinary inputs (written once per module)."""
    root.mkdir(parents=True, exist_ok=True)

    def write(name: str, data: str | bytes) -> str:
        path = root / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
        return str(path)

    bomb = [
        "apiVersion: kubeflow.org/v1",
        "kind: PyTorchJob",
        "metadata: {name: b, uid: u}",
        "a0: &a0 [x, x, x, x]",
    ]
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]" for i in range(1, 9)]
    bomb.append("spec: {pytorchReplicaSpecs: {Worker: {replicas: 1, template: {spec: {containers: *a8}}}}}")
    huge = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "huge", "annotations": {f"k{i}": "v" * 50 for i in range(20_000)}},
        "spec": {
            "pytorchReplicaSpecs": {"Worker": {"replicas": 3, "template": {"spec": {"containers": []}}}}
        },
    }
    pool = [
        str(root / "missing.yaml"),
        str(root),  # a directory
        write("empty.yaml", ""),
        write("nulls.yaml", "---\n---\n"),
        write("binary.yaml", bytes(range(256)) * 4),
        write("garbage.yaml", "{[: : - ]\n\t- x: !!python/object:os.system ls\n"),
        write("scalar.yaml", "42\n"),
        write("list.yaml", "- a\n- b\n"),
        write("deep.yaml", "[" * 5000 + "]" * 5000),
        write("bomb.yaml", "\n".join(bomb) + "\n"),
        write("huge.yaml", yaml.safe_dump(huge)),
        write("list-kind.yaml", "apiVersion: v1\nkind: List\nitems: [1, {kind: Pod}]\n"),
        write("no-kind.yaml", "apiVersion: v1\nmetadata: {name: x}\n"),
        write("two.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\n"),
        write(
            "karta-as-pod.yaml", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: k}\nspec: 1\n"
        ),
        write("config.yaml", "output: json\n"),
        write("bad-config.yaml", "output: nope\ncolour: yes\n"),
        write("predict.yaml", "status: Running\nnope: 1\ncomponents: {worker: {replicas: x}}\n"),
        write("kubeconfig.yaml", "apiVersion: v1\nkind: Config\nclusters: 1\n"),
        # issue 9: numbers JSON cannot hold, duplicate keys, control characters
        write("bigint.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nn: 1" + "0" * 5000 + "\n"),
        write("inf.json", '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "n": 1e400}'),
        write(
            "dupkeys.yaml",
            "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: k, name: j}\n"
            "spec: {structureDefinition: {rootComponent: {name: r}}}\n",
        ),
        write(
            "escapes.yaml",
            'apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: "j\\e]52;c;SGk=\\a"}\n'
            'status: {conditions: [{type: Running, status: "True", reason: "\\e[2J\\x9b"}]}\n',
        ),
        "-",
    ]
    assert len(pool) == AWKWARD
    pool += [str(p) for p in sorted((EXAMPLES / "definitions").glob("*.yaml"))[:3]]
    pool += [str(p) for p in sorted((EXAMPLES / "workloads").glob("*.yaml"))[:3]]
    pool += [str(p) for p in sorted((EXAMPLES / "pods").glob("*.yaml"))[:2]]
    pool += [str(p) for p in sorted((EXAMPLES / "invalid").glob("*.yaml"))[:2]]
    if CORPUS.is_dir():
        pool += [str(p) for p in sorted((CORPUS / "crds").glob("*.yaml"))[:2]]
    return pool


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _file_pool(tmp_path_factory.mktemp("fuzz-files"))


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No cluster, no user definitions, no config, no developer environment."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KARTA_DEBUG", "KUBERNETES_SERVICE_HOST", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in sorted(_COMMANDS)}
    return {name: command for name, command in found.items() if command is not None}


COMMANDS = _commands()
FILE_PARAMS = {"file", "pods_file", "definition", "config_file", "crd_file", "crds", "workload", "predict"}
FILE_PARAMS |= {"kubeconfig", "certificate_authority", "client_certificate", "client_key", "cache_dir"}
FILE_PARAMS |= {"definitions", "files"}


def _value(param: click.Parameter, files: list[str]) -> st.SearchStrategy[str]:
    name = param.name or ""
    if name in _CONNECTION_VALUES:
        return st.sampled_from(_CONNECTION_VALUES[name])
    if name in FILE_PARAMS:
        return st.one_of(st.sampled_from(files), st.sampled_from(TOKENS))
    if isinstance(param.type, click.Choice):
        return st.sampled_from([*map(str, param.type.choices), "", "bogus", "JSON", "table,json"])
    if isinstance(param.type, click.types.IntParamType):
        return st.one_of(st.integers(-3, 5).map(str), st.sampled_from(["x", "1.5", "", "-0", "1e9"]))
    return st.one_of(st.sampled_from(TOKENS), st.text(max_size=8))


@st.composite
def command_lines(draw: st.DrawFn, files: list[str]) -> list[str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    command = COMMANDS[name]
    parts: list[list[str]] = []
    for param in command.params:
        if isinstance(param, click.Argument):
            count = draw(st.integers(0, 3 if param.nargs == -1 else 2))
            parts += [[draw(_value(param, files))] for _ in range(count)]
            continue
        assert isinstance(param, click.Option)
        if draw(st.integers(0, 3)) != 0:  # each option in about a quarter of the lines
            continue
        flag = draw(st.sampled_from(param.opts))
        if param.is_flag:
            parts.append([flag])
        elif flag.startswith("--") and draw(st.booleans()):
            parts.append([f"{flag}={draw(_value(param, files))}"])
        else:
            parts.append([flag, draw(_value(param, files))])
    if draw(st.integers(0, 4)) == 0:
        parts.append([draw(st.sampled_from(UNKNOWN_FLAGS))])
    order = draw(st.permutations(range(len(parts))))
    return [name, *(word for index in order for word in parts[index])]


def _check(argv: list[str], code: int, err: str, out: str = "") -> None:
    where = f"kli {' '.join(argv)}"
    assert code in EXIT_CODES, (where, code, err)
    assert "Traceback" not in err, (where, err)
    assert "internal error" not in err, (where, err)
    for line in err.splitlines():
        assert line.startswith(("error: ", "hint: ", "warning: ")), (where, line)
    assert "\x1b" not in err and "\x9b" not in err, (where, err)  # escaped, never written (issue 9)
    assert "\x1b" not in out, (where, out[:300])  # tables escape it, JSON and YAML too (no colour here)


Run = Callable[[list[str], str], tuple[int, str, str]]


@pytest.fixture
def run(isolated: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    def call(argv: list[str], stdin: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        code = main(argv)
        out, err = capsys.readouterr()
        return code, out, err

    return run_checked(call)


def run_checked(call: Callable[[list[str], str], tuple[int, str, str]]) -> Run:
    def checked(argv: list[str], stdin: str) -> tuple[int, str, str]:
        code, out, err = call(argv, stdin)
        _check(argv, code, err, out)
        return code, out, err

    return checked


STDIN = st.one_of(
    st.sampled_from(["", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "{", "- 1\n"]),
    st.text(max_size=40),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_command_line_makes_a_traceback(run: Run, files: list[str], data: st.DataObject) -> None:
    argv = data.draw(command_lines(files), label="argv")
    run(argv, data.draw(STDIN, label="stdin"))


# completion, crd and catalog read no file (catalog export --dir writes one: tests/unit/cli/test_installer.py)
@pytest.mark.parametrize("name", sorted(set(COMMANDS) - {"completion", "crd", "catalog"}))
def test_every_command_with_every_awkward_file(run: Run, files: list[str], name: str) -> None:
    """Each command, each awkward file in every file-taking position (deterministic)."""
    command = COMMANDS[name]
    if isinstance(command, click.Group):  # kli top nodes|gpus: each subcommand
        targets = [([name, sub], command.commands[sub]) for sub in sorted(command.commands)]
    else:
        targets = [([name], command)]
    for prefix, target in targets:
        slots = [p for p in target.params if (p.name or "") in FILE_PARAMS - {"kubeconfig", "cache_dir"}]
        assert slots, prefix
        for path in files[:AWKWARD]:
            for slot in slots:
                argv = [*prefix, path] if isinstance(slot, click.Argument) else [*prefix, slot.opts[-1], path]
                if name == "gang":
                    argv += ["--backend", "kai"]
                run(argv, "{")


def test_an_alias_bomb_is_a_usage_error(run: Run, files: list[str]) -> None:
    (bomb,) = [f for f in files if f.endswith("bomb.yaml")]
    for argv in (["inspect", "-f", bomb, "-o", "json"], ["describe", "-f", bomb], ["validate", bomb]):
        code, out, err = run(argv, "")
        assert code == 2 and "aliases" in err and out == "", (argv, err)


def _named(files: list[str], suffix: str) -> str:
    (path,) = [f for f in files if f.endswith(suffix)]
    return path


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["get", "pods", "-s", "not a url"], 1, "cannot use the cluster configuration: invalid server URL"),
        (
            ["get", "pods", "-s", "http://127.0.0.1:1", "--as", "\U00109e4b"],
            2,
            "--as: the value cannot be sent",
        ),
        (["get", "pods", "--as-group", "a\r\nX-Evil: 1", "-s", "http://127.0.0.1:1"], 2, "--as-group:"),
        (["get", "pods", "--kubeconfig", "kubeconfig.yaml"], 1, "clusters is not a list"),
        (["get", "pods", "--kubeconfig", "binary.yaml"], 1, "cannot read kubeconfig"),
        (["get", "pods", "--kubeconfig", "deep.yaml"], 1, "nested too deeply"),
        (["get", "pods", "--kubeconfig", "two.yaml"], 1, "expected a single document"),
        (["definitions", "--kubeconfig", "two.yaml"], 0, "expected a single document"),
        (["completion"], 2, "Choose from: bash, zsh, fish, powershell"),
    ],
)
def test_found_by_fuzzing(run: Run, files: list[str], argv: list[str], code: int, message: str) -> None:
    """Inputs that once ended as internal errors or as multi-line messages."""
    argv = [_named(files, "/" + a) if a.endswith(".yaml") else a for a in argv]
    got, _, err = run(argv, "")
    assert got == code and message in err, err


def test_every_command_is_fuzzed() -> None:
    assert set(COMMANDS) == set(_COMMANDS)
    assert {"get", "describe", "definitions", "validate", "inspect", "gang", "scaffold"} <= set(COMMANDS)
    assert {"verify", "rbac", "completion"} <= set(COMMANDS)
