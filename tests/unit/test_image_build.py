"""The container image's two recipes agree (cheap checks; the build itself is hack/image/build.sh,
run by hand: it needs Debian's mirror, PyPI and about two minutes).

hack/image/build.sh (the reproducible build, no base image pulled) and the Containerfile (for those
with a registry) must install the same Debian packages and pinned Python dependencies and give the
image the same user, entrypoint, working directory, environment, ports and OCI labels; the pins of
hack/image/requirements.txt must cover exactly the dependencies of pyproject.toml.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tomllib
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "hack" / "image" / "build.sh"
CUSTOMIZE = REPO / "hack" / "image" / "customize.sh"
LOCK = REPO / "hack" / "image" / "lock.sh"
REQUIREMENTS = REPO / "hack" / "image" / "requirements.txt"
CONSTRAINTS = REPO / "hack" / "image" / "build-constraints.txt"
CONTAINERFILE = REPO / "Containerfile"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
OCI_LABELS = {"source", "version", "revision", "licenses", "title", "description", "created"}


# --------------------------------------------------------------------------------- build.sh


def _script_values() -> dict[str, str | list[str]]:
    """The ``NAME=value`` and ``NAME=(...)`` assignments of build.sh's "what is built" block."""
    text = BUILD.read_text()
    block = text[text.index("# --- what is built") : text.index('cd "$repo"')]
    values: dict[str, str | list[str]] = {}
    for match in re.finditer(r"^([A-Z_]+)=\((.*?)\)$", block, re.S | re.M):
        values[match[1]] = shlex.split(match[2], comments=True)
    for match in re.finditer(r"^([A-Z_]+)=([^(\n].*)$", block, re.M):
        (values[match[1]],) = shlex.split(match[2])
    return values


def _script_labels() -> dict[str, str]:
    text = BUILD.read_text()
    pairs = re.findall(r'"org\.opencontainers\.image\.([a-z]+)=([^"]*)"', text)
    return dict(pairs)


# ------------------------------------------------------------------------------ Containerfile


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Containerfile, continuation lines joined, comments dropped."""
    lines: list[str] = []
    pending = ""
    for raw in CONTAINERFILE.read_text().splitlines():
        if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    out = []
    for line in lines:
        word, _, rest = line.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    steps = _instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def _pairs(arguments: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in shlex.split(arguments))


def _apt_packages(run: str) -> list[str]:
    words = shlex.split(run)
    start = words.index("install") + 1
    end = words.index("&&", start)
    return [w for w in words[start:end] if not w.startswith("-")]


# ------------------------------------------------------------------------------------- tests


def test_both_build_the_same_debian_release_and_packages() -> None:
    values = _script_values()
    assert values["SUITE"] == "bookworm"
    args = dict(rest.split("=", 1) for word, rest in _instructions() if word == "ARG")
    assert args["DEBIAN_IMAGE"].endswith(f":{values['SUITE']}-slim")
    runs = [rest for word, rest in _final_stage() if word == "RUN" and "apt-get install" in rest]
    assert len(runs) == 1
    assert _apt_packages(runs[0]) == str(values["PACKAGES"]).split(",")
    assert "--no-install-recommends" in runs[0]


def test_both_run_as_the_same_non_root_user() -> None:
    values = _script_values()
    final = _final_stage()
    assert values["IMAGE_USER"] == "65532:65532"
    assert [rest for word, rest in final if word == "USER"] == [values["IMAGE_USER"]]
    assert str(values["PASSWD_LINE"]).split(":")[2:4] == ["65532", "65532"]
    text = CONTAINERFILE.read_text()
    assert f"echo '{values['PASSWD_LINE']}' >> /etc/passwd" in text
    assert f"echo '{values['GROUP_LINE']}' >> /etc/group" in text
    assert f"install -d -m 0755 -o 65532 -g 65532 {values['WORKDIR']}" in text
    assert 'install -d -m 0755 -o 65532 -g 65532 "$root$home"' in CUSTOMIZE.read_text()


def test_both_have_the_same_entrypoint_workdir_environment_and_ports() -> None:
    values = _script_values()
    final = _final_stage()
    (entrypoint,) = [json.loads(rest) for word, rest in final if word == "ENTRYPOINT"]
    assert entrypoint == [values["ENTRYPOINT"]] == ["karta-controller"]
    assert values["ENTRYPOINT"] in PYPROJECT["project"]["scripts"]
    assert [rest for word, rest in final if word == "WORKDIR"] == [values["WORKDIR"]]
    (env,) = [_pairs(rest) for word, rest in final if word == "ENV"]
    assert env == dict(e.split("=", 1) for e in values["ENVIRONMENT"])
    (ports,) = [rest.split() for word, rest in final if word == "EXPOSE"]
    assert ports == values["PORTS"]


def test_both_carry_the_same_oci_labels() -> None:
    script = _script_labels()
    (labels,) = [_pairs(rest) for word, rest in _final_stage() if word == "LABEL"]
    container = {k.removeprefix("org.opencontainers.image."): v for k, v in labels.items()}
    assert set(script) == set(container) == OCI_LABELS
    values = _script_values()
    constants = {
        "source": "SOURCE_URL",
        "licenses": "LICENSES",
        "title": "TITLE",
        "description": "DESCRIPTION",
    }
    for label, variable in constants.items():
        assert script[label] == f"${variable}"
        assert container[label] == values[variable], label
    assert values["LICENSES"] == PYPROJECT["project"]["license"]["text"]
    assert script["version"] == "$version" and container["version"] == "${VERSION}"
    assert script["revision"] == "$revision" and container["revision"] == "${REVISION}"
    args = dict(rest.split("=", 1) for word, rest in _final_stage() if word == "ARG")
    assert args["VERSION"] == PYPROJECT["project"]["version"]


def test_both_install_the_pinned_dependencies_with_their_hashes_and_the_pinned_backend() -> None:
    text = CONTAINERFILE.read_text()
    assert "--require-hashes" in text and "-r /src/hack/image/requirements.txt" in text
    assert '--require-hashes -r "$work/requirements.txt"' in CUSTOMIZE.read_text()
    assert 'cp "$here/requirements.txt" "$work/requirements.txt"' in BUILD.read_text()
    assert "PIP_CONSTRAINT=/src/hack/image/build-constraints.txt python3 -m pip wheel" in text
    assert 'PIP_CONSTRAINT="$here/build-constraints.txt"' in BUILD.read_text()
    pins = {
        canonicalize_name(line.split("==")[0]): line.split("==")[1]
        for line in CONSTRAINTS.read_text().splitlines()
        if line and not line.startswith("#")
    }
    for spec in PYPROJECT["build-system"]["requires"]:
        req = Requirement(spec)
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), (req, pins)


def _closure(names: list[str]) -> set[str]:
    """The names of ``names`` and of everything they require (installed metadata, markers for
    this Python), as the lock resolves them."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for spec in requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def test_the_lock_pins_exactly_the_dependencies_with_hashes() -> None:
    pins: dict[str, str] = {}
    for line in REQUIREMENTS.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) --hash=sha256:([0-9a-f]{64})", line)
        assert match, line
        pins[canonicalize_name(match[1])] = match[2]
    wanted = [Requirement(d) for d in PYPROJECT["project"]["dependencies"]]
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not pinned: run hack/image/lock.sh"
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])
    assert set(pins) == _closure([r.name for r in wanted])


def test_the_scripts_parse() -> None:
    for script in (BUILD, CUSTOMIZE, LOCK):
        assert script.stat().st_mode & 0o111, f"{script.name} is not executable"
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["hack/image/build.sh", "hack/image/lock.sh", "Containerfile"])
def test_the_image_page_names_the_recipes(name: str) -> None:
    assert name in (REPO / "docs" / "tasks" / "image.md").read_text()
