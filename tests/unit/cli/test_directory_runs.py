"""Directory runs (issue 28): ``-f DIR -R`` processes every file, reports each failure as its own
``error:`` line and exits non-zero at the end, with the first failure's code (a file that is not a
Kubernetes object is a usage error, 2, as with ``-f FILE``); a run over one good file is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

POD = {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}


def job(**metadata: str) -> dict[str, object]:
    """A two-pod Job in namespace ml with ``metadata`` (a name left out: unnamed)."""
    spec = {"parallelism": 2, "completions": 2, "template": POD}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"namespace": "ml", **metadata},
        "spec": spec,
    }


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    root = tmp_path / "manifests"
    (root / "status-fragments").mkdir(parents=True)
    (root / "a-job.yaml").write_text(yaml.safe_dump(job(name="train", uid="u-1")))
    (root / "b-unnamed.yaml").write_text(yaml.safe_dump(job(uid="u-2")))
    (root / "c-broken.yaml").write_text("kind: [\n")
    (root / "d-other.yaml").write_text(yaml.safe_dump(job(name="other", uid="u-3")))
    (root / "status-fragments" / "e.yaml").write_text(yaml.safe_dump({"status": {"phase": "Running"}}))
    return root


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def test_describe_goes_on_past_bad_files(kli, directory: Path) -> None:
    r = kli("describe", "-f", str(directory), "-R")
    assert r.code == 2
    assert "Job/train" in r.out and "Job/other" in r.out
    errors = _errors(r.err)
    assert any("c-broken.yaml" in e and "cannot parse" in e for e in errors), r.err
    assert any("e.yaml (document 1): the workload object has no apiVersion" in e for e in errors), r.err
    assert errors[-1] == (
        f"error: 2 failures in {directory}, each reported above; everything else was processed"
    )


def test_gang_renders_every_workload_but_the_unnamed_one(kli, directory: Path) -> None:
    r = kli("gang", "--backend", "volcano", "-f", str(directory), "-R")
    assert r.code == 2  # the first failure: a file that is not a Kubernetes object
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(r.out) if d]
    assert sorted(names) == ["other-job", "train-job"]
    errors = _errors(r.err)
    assert any("b-unnamed.yaml: the workload has no metadata.name" in e for e in errors), r.err
    assert errors[-1].startswith(f"error: 3 failures in {directory}")


def test_gang_with_only_render_failures_exits_1(kli, tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.yaml").write_text(yaml.safe_dump(job(name="train")))
    (root / "b.yaml").write_text(yaml.safe_dump(job()))
    r = kli("gang", "--backend", "volcano", "-f", str(root))
    assert r.code == 1
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(r.out) if d] == ["train-job"]


def test_inspect_goes_on_past_bad_files(kli, directory: Path) -> None:
    r = kli("inspect", "-f", str(directory), "-R", "-o", "json")
    assert r.code == 2
    assert '"count": 3' in r.out
    assert _errors(r.err)[-1].startswith(f"error: 2 failures in {directory}")


def test_one_good_file_is_unchanged(kli, directory: Path) -> None:
    r = kli("describe", "-f", str(directory / "a-job.yaml"))
    assert r.code == 0, r.err
    r = kli("describe", "-f", str(directory / "c-broken.yaml"))
    assert r.code == 2
    assert len(_errors(r.err)) == 1
