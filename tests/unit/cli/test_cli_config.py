"""The config file and output precedence (17.2): flag > $KARTA_OUTPUT > config file > table."""

from __future__ import annotations

from pathlib import Path

import pytest

from karta.cli.config import DEFAULT_GPU_RESOURCES, Config, config_path, load_config, resolve_output
from karta.cli.errors import UsageError

ALLOWED = ("table", "json", "yaml")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KARTA_CONFIG", raising=False)
    monkeypatch.delenv("KARTA_OUTPUT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return str(path)


def test_missing_default_file_is_fine() -> None:
    assert load_config() == Config()
    assert load_config().gpu_resources == DEFAULT_GPU_RESOURCES


def test_default_file_in_home_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".karta"
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("output: json\n")
    assert load_config().output == "json"
    assert config_path() == (home / "config.yaml", False)


def test_missing_explicit_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match=r"cannot read the config file .*: no such file"):
        load_config(str(tmp_path / "nope.yaml"))
    monkeypatch.setenv("KARTA_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(UsageError, match="no such file"):
        load_config()


def test_flag_wins_over_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flag = write(tmp_path, "output: yaml\n")
    other = tmp_path / "other.yaml"
    other.write_text("output: json\n")
    monkeypatch.setenv("KARTA_CONFIG", str(other))
    assert load_config(flag).output == "yaml"
    assert load_config().output == "json"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("output: [", "cannot parse the config file"),
        ("- a\n- b\n", "expected a mapping of settings"),
        ("outputt: json\n", "unknown key 'outputt'"),
        ("output: xml\n", "invalid output 'xml'"),
        ("gpuResources: nvidia.com/gpu\n", "gpuResources must be a non-empty list"),
        ("gpuResources: []\n", "gpuResources must be a non-empty list"),
        ("gpuResources: [1]\n", "gpuResources must be a non-empty list"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_config(write(tmp_path, text))


def test_empty_file_and_gpu_resources(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "")).output is None
    config = load_config(write(tmp_path, "gpuResources: [amd.com/gpu, nvidia.com/gpu, amd.com/gpu]\n"))
    assert config.gpu_resources == ("amd.com/gpu", "nvidia.com/gpu")


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="it is a directory"):
        load_config(str(tmp_path))


def test_output_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    file_json = Config(output="json")
    assert resolve_output(None, config=Config(), allowed=ALLOWED) == "table"
    assert resolve_output(None, config=file_json, allowed=ALLOWED) == "json"
    monkeypatch.setenv("KARTA_OUTPUT", "yaml")
    assert resolve_output(None, config=file_json, allowed=ALLOWED) == "yaml"
    assert resolve_output("table", config=file_json, allowed=ALLOWED) == "table"


def test_wide_from_environment_or_file_falls_back_to_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_output(None, config=Config(output="wide"), allowed=ALLOWED) == "table"
    monkeypatch.setenv("KARTA_OUTPUT", "wide")
    assert resolve_output(None, config=Config(), allowed=ALLOWED) == "table"
    assert resolve_output(None, config=Config(), allowed=(*ALLOWED, "wide")) == "wide"


def test_invalid_environment_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARTA_OUTPUT", "xml")
    with pytest.raises(UsageError, match=r"invalid \$KARTA_OUTPUT 'xml'"):
        resolve_output(None, config=Config(), allowed=ALLOWED)
    monkeypatch.setenv("KARTA_OUTPUT", "  ")
    assert resolve_output(None, config=Config(), allowed=ALLOWED) == "table"
