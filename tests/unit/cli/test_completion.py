"""``kli completion``: scripts for four shells, and what the completion protocol answers."""

from __future__ import annotations

import pytest

from karta.cli.completion import type_tokens
from karta.cli.main import main
from karta.definitions import DefinitionStore
from karta.model import karta_from_dict


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _kli_completion kli"),
        ("zsh", "#compdef kli"),
        ("fish", "complete --no-files --command kli"),
        ("powershell", "Register-ArgumentCompleter -Native -CommandName 'kli'"),
    ],
)
def test_scripts(kli, shell: str, marker: str) -> None:
    r = kli("completion", shell)
    assert r.code == 0, r.err
    assert marker in r.out
    assert "_KLI_COMPLETE" in r.out


def test_unknown_shell_is_a_usage_error(kli) -> None:
    assert kli("completion", "tcsh").code == 2


def complete(monkeypatch, capsys, words: str, cword: int) -> list[str]:
    monkeypatch.setenv("_KLI_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(cword))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([])
    return capsys.readouterr().out.splitlines()


def test_protocol_completes_commands_choices_and_definition_names(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path))
    assert "plain,scaffold" in complete(monkeypatch, capsys, "kli sc", 1)
    assert complete(monkeypatch, capsys, "kli completion f", 2) == ["plain,fish"]
    names = complete(monkeypatch, capsys, "kli rbac ray-io-ray", 2)
    assert names == ["plain,ray-io-raycluster-v1", "plain,ray-io-rayjob-v1", "plain,ray-io-rayservice-v1"]
    assert complete(monkeypatch, capsys, "kli rbac ./defs/", 2) == ["file,./defs/"]


def karta(group: str, version: str, kind: str, name: str):
    return karta_from_dict(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": name},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "root",
                        "kind": {"group": group, "version": version, "kind": kind},
                        "statusDefinition": {
                            "statusMappings": {
                                "running": [
                                    {"byExpression": {"expression": "true", "expectedResult": "true"}}
                                ]
                            }
                        },
                    }
                }
            },
        }
    )


def test_type_tokens_qualify_kinds_covered_at_several_gvks(tmp_path) -> None:
    store = DefinitionStore.offline(user_directory=tmp_path)
    tokens = type_tokens(store)
    assert "pytorchjob" in tokens and "raycluster" in tokens and "pod" in tokens
    # MPIJob exists at kubeflow.org/v1 and v2beta1: qualified, never bare
    assert "mpijob" not in tokens
    assert {"mpijob.v1.kubeflow.org", "mpijob.v2beta1.kubeflow.org"} <= set(tokens)
    assert tokens == sorted(tokens)
    both = store.with_cluster(
        [karta("acme.ai", "v1", "Job", "acme-job"), karta("acme.ai", "v1", "Widget", "w")]
    )
    tokens = type_tokens(both)
    assert (
        "job.v1.batch" in tokens and "job.v1.acme.ai" in tokens and "widget" in tokens and "job" not in tokens
    )


def test_complete_types_callback(monkeypatch, tmp_path) -> None:
    import click

    from karta.cli.completion import complete_types

    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))  # NAMEs: no cluster, nothing
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    ctx = click.Context(click.Command("x"))
    values = [i.value for i in complete_types(ctx, click.Argument(["t"]), "PyT")]
    assert values == ["pytorchjob"]
    assert complete_types(ctx, click.Argument(["t"]), "pytorchjob/") == []


def test_context_completes_the_kubeconfigs_contexts(monkeypatch, capsys, tmp_path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncontexts:\n"
        "- {name: prod-east, context: {cluster: x}}\n- {name: prod-west, context: {cluster: x}}\n"
        "- {name: lab, context: {cluster: x}}\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    prod = complete(monkeypatch, capsys, "kli get jobs --context prod", 4)
    assert prod == ["plain,prod-east", "plain,prod-west"]
    words = f"kli get jobs --kubeconfig {config} --context a --context "
    assert complete(monkeypatch, capsys, words, 8) == ["plain,lab", "plain,prod-east", "plain,prod-west"]
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert [w for w in complete(monkeypatch, capsys, "kli describe --context ", 3) if w] == []
