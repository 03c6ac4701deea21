"""Shared test data for the Karta CRD: one valid definition that uses every list of the schema, and
one invalid variant per kind of CRD rule (docs/spec/format.md#field-tree and #crd-rules).

Owns :func:`valid_definition` and :data:`INVALID_CASES`. The offline tests check each case against
the generated schema and the model; the e2e tests send the same cases to a real API server. Each
case names the field path the server reports and a substring of its message.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Data = dict[str, Any]


def valid_definition(name: str = "crd-test-everything") -> Data:
    """A valid Karta that sets every list-typed and rule-carrying field of the CRD at least once."""
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "app",
                    "kind": {"group": "crd-test.example.com", "version": "v1", "kind": "App"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "conditionsDefinition": {"path": ".status.conditions"},
                        "statusMappings": {
                            "running": [
                                {"byPhase": "Running"},
                                {"byConditions": [{"type": "Ready", "status": "True", "reason": "Up"}]},
                            ],
                            "completed": [
                                {
                                    "byExpression": {
                                        "expression": ".status.done == true",
                                        "expectedResult": "true",
                                    }
                                }
                            ],
                            "suspended": [{"byPhase": "Suspended"}],
                        },
                    },
                    "suspendDefinition": {
                        "suspendActions": [{"path": ".spec.suspend", "value": "true"}],
                        "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
                    },
                },
                "childComponents": [
                    {
                        "name": "leader",
                        "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "ownerRef": "app",
                        "specDefinition": {"podTemplateSpecPath": ".spec.leader.template"},
                        "scaleDefinition": {"replicasPath": "1"},
                        "podSelector": {
                            "componentTypeSelector": {
                                "keyPath": '.metadata.labels["crd-test.example.com/role"]',
                                "value": "leader",
                            }
                        },
                    },
                    {
                        "name": "worker",
                        "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "ownerRef": "app",
                        "specDefinition": {"podTemplateSpecPath": ".spec.worker.template"},
                        "scaleDefinition": {
                            "replicasPath": ".spec.worker.replicas",
                            "minReplicasPath": ".spec.worker.minReplicas",
                            "maxReplicasPath": ".spec.worker.maxReplicas",
                        },
                        "podSelector": {
                            "componentTypeSelector": {"matchLabels": {"crd-test.example.com/role": "worker"}}
                        },
                    },
                ],
                "additionalChildKinds": [
                    {"group": "", "version": "v1", "kind": "Service"},
                    {"group": "", "version": "v1", "kind": "ConfigMap"},
                ],
            },
            "optimizationInstructions": {
                "gangScheduling": {
                    "podGroup": {
                        "name": "app",
                        "subGroups": [
                            {"componentName": "leader"},
                            {
                                "componentName": "worker",
                                "topology": {
                                    "topologyName": "default",
                                    "requiredTopologyLevel": "rack",
                                    "preferredTopologyLevel": "host",
                                },
                            },
                        ],
                        "topology": {
                            "topologyName": "default",
                            "requiredTopologyLevel": "zone",
                            "preferredTopologyLevel": "rack",
                        },
                    }
                }
            },
        },
    }


def alpha_definition(name: str = "crd-test-alpha") -> Data:
    """A valid Karta in the alpha gang format (``podGroups`` with members, key paths and filters)."""
    data = valid_definition(name)
    data["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {
                    "name": "leaders",
                    "members": [{"componentName": "leader"}],
                },
                {
                    "name": "workers",
                    "members": [
                        {
                            "componentName": "worker",
                            "groupByKeyPaths": ['.metadata.labels["crd-test.example.com/group"]'],
                            "filters": ['.metadata.labels["crd-test.example.com/role"] == "worker"'],
                        }
                    ],
                },
            ]
        }
    }
    return data


def _root(data: Data) -> Data:
    root: Data = data["spec"]["structureDefinition"]["rootComponent"]
    return root


def _child(data: Data, i: int) -> Data:
    child: Data = data["spec"]["structureDefinition"]["childComponents"][i]
    return child


def _pod_group(data: Data) -> Data:
    group: Data = data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]
    return group


def _alpha_groups(data: Data) -> list[Data]:
    groups: list[Data] = data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"]
    return groups


@dataclass(frozen=True)
class InvalidCase:
    """One definition the CRD must reject: where, and a substring of the API server's message."""

    id: str
    mutate: Callable[[Data], None]
    path: str
    message: str
    alpha: bool = False  # start from alpha_definition() instead of valid_definition()

    def build(self, name: str) -> Data:
        data = alpha_definition(name) if self.alpha else valid_definition(name)
        data = copy.deepcopy(data)
        self.mutate(data)
        return data


_SD = "spec.structureDefinition"
_ROOT = f"{_SD}.rootComponent"
_GANG = "spec.optimizationInstructions.gangScheduling"
_TYPE_SEL = f"{_SD}.childComponents[1].podSelector.componentTypeSelector"


def _set(getter: Callable[[Data], Any], key: str, value: Any) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        getter(data)[key] = value

    return mutate


def _delete(getter: Callable[[Data], Any], key: str) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        del getter(data)[key]

    return mutate


def _append_copy(getter: Callable[[Data], list[Any]], index: int) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        items = getter(data)
        items.append(copy.deepcopy(items[index]))

    return mutate


def _sel(data: Data) -> Data:
    sel: Data = _child(data, 1)["podSelector"]["componentTypeSelector"]
    return sel


INVALID_CASES: tuple[InvalidCase, ...] = (
    # required fields
    InvalidCase(
        "missing-structureDefinition",
        _delete(lambda d: d["spec"], "structureDefinition"),
        _SD,
        "Required value",
    ),
    InvalidCase(
        "missing-rootComponent",
        _delete(lambda d: d["spec"]["structureDefinition"], "rootComponent"),
        f"{_SD}.rootComponent",
        "Required value",
    ),
    InvalidCase("missing-root-name", _delete(_root, "name"), f"{_ROOT}.name", "Required value"),
    InvalidCase(
        "missing-child-name",
        _delete(lambda d: _child(d, 0), "name"),
        f"{_SD}.childComponents[0].name",
        "Required value",
    ),
    InvalidCase(
        "missing-gvk-version",
        _delete(lambda d: _root(d)["kind"], "version"),
        f"{_ROOT}.kind.version",
        "Required value",
    ),
    InvalidCase(
        "missing-statusMappings",
        _delete(lambda d: _root(d)["statusDefinition"], "statusMappings"),
        f"{_ROOT}.statusDefinition.statusMappings",
        "Required value",
    ),
    InvalidCase(
        "missing-phase-path",
        _delete(lambda d: _root(d)["statusDefinition"]["phaseDefinition"], "path"),
        f"{_ROOT}.statusDefinition.phaseDefinition.path",
        "Required value",
    ),
    InvalidCase(
        "missing-condition-matcher-type",
        _delete(
            lambda d: _root(d)["statusDefinition"]["statusMappings"]["running"][1]["byConditions"][0], "type"
        ),
        f"{_ROOT}.statusDefinition.statusMappings.running[1].byConditions[0].type",
        "Required value",
    ),
    InvalidCase(
        "missing-expectedResult",
        _delete(
            lambda d: _root(d)["statusDefinition"]["statusMappings"]["completed"][0]["byExpression"],
            "expectedResult",
        ),
        f"{_ROOT}.statusDefinition.statusMappings.completed[0].byExpression.expectedResult",
        "Required value",
    ),
    InvalidCase(
        "missing-action-value",
        _delete(lambda d: _root(d)["suspendDefinition"]["suspendActions"][0], "value"),
        f"{_ROOT}.suspendDefinition.suspendActions[0].value",
        "Required value",
    ),
    InvalidCase(
        "missing-resumeActions",
        _delete(lambda d: _root(d)["suspendDefinition"], "resumeActions"),
        f"{_ROOT}.suspendDefinition.resumeActions",
        "Required value",
    ),
    InvalidCase(
        "missing-instance-idPath",
        _set(lambda d: _child(d, 1)["podSelector"], "componentInstanceSelector", {}),
        f"{_SD}.childComponents[1].podSelector.componentInstanceSelector.idPath",
        "Required value",
    ),
    InvalidCase(
        "missing-pod-group-name", _delete(_pod_group, "name"), f"{_GANG}.podGroup.name", "Required value"
    ),
    InvalidCase(
        "missing-member-componentName",
        _delete(lambda d: _alpha_groups(d)[0]["members"][0], "componentName"),
        f"{_GANG}.podGroups[0].members[0].componentName",
        "Required value",
        alpha=True,
    ),
    InvalidCase(
        "missing-alpha-members",
        _delete(lambda d: _alpha_groups(d)[0], "members"),
        f"{_GANG}.podGroups[0].members",
        "Required value",
        alpha=True,
    ),
    # the two CEL rules of componentTypeSelector
    InvalidCase(
        "cel-keyPath-or-matchLabels",
        _set(lambda d: _child(d, 1)["podSelector"], "componentTypeSelector", {}),
        _TYPE_SEL,
        "at least one of keyPath or matchLabels must be set",
    ),
    InvalidCase(
        "cel-value-requires-keyPath", _set(_sel, "value", "worker"), _TYPE_SEL, "value requires keyPath"
    ),
    # minItems / minLength / minProperties
    InvalidCase(
        "empty-suspendActions",
        _set(lambda d: _root(d)["suspendDefinition"], "suspendActions", []),
        f"{_ROOT}.suspendDefinition.suspendActions",
        "should have at least 1 items",
    ),
    InvalidCase(
        "empty-resumeActions",
        _set(lambda d: _root(d)["suspendDefinition"], "resumeActions", []),
        f"{_ROOT}.suspendDefinition.resumeActions",
        "should have at least 1 items",
    ),
    InvalidCase(
        "empty-keyPath",
        _set(lambda d: _child(d, 0)["podSelector"]["componentTypeSelector"], "keyPath", ""),
        f"{_SD}.childComponents[0].podSelector.componentTypeSelector.keyPath",
        "should be at least 1 chars long",
    ),
    InvalidCase(
        "empty-matchLabels",
        _set(_sel, "matchLabels", {}),
        f"{_TYPE_SEL}.matchLabels",
        "should have at least 1 properties",
    ),
    # list-map keys and sets reject duplicates
    InvalidCase(
        "duplicate-child-name",
        _append_copy(lambda d: d["spec"]["structureDefinition"]["childComponents"], 1),
        f"{_SD}.childComponents[2]",
        "Duplicate value",
    ),
    InvalidCase(
        "duplicate-additional-kind",
        _append_copy(lambda d: d["spec"]["structureDefinition"]["additionalChildKinds"], 0),
        f"{_SD}.additionalChildKinds[2]",
        "Duplicate value",
    ),
    InvalidCase(
        "duplicate-subgroup",
        _append_copy(lambda d: _pod_group(d)["subGroups"], 0),
        f"{_GANG}.podGroup.subGroups[2]",
        "Duplicate value",
    ),
    InvalidCase(
        "duplicate-pod-group-name",
        _append_copy(_alpha_groups, 0),
        f"{_GANG}.podGroups[2]",
        "Duplicate value",
        alpha=True,
    ),
    InvalidCase(
        "duplicate-member",
        _append_copy(lambda d: _alpha_groups(d)[1]["members"], 0),
        f"{_GANG}.podGroups[1].members[1]",
        "Duplicate value",
        alpha=True,
    ),
    InvalidCase(
        "duplicate-groupByKeyPath",
        _append_copy(lambda d: _alpha_groups(d)[1]["members"][0]["groupByKeyPaths"], 0),
        f"{_GANG}.podGroups[1].members[0].groupByKeyPaths[1]",
        "Duplicate value",
        alpha=True,
    ),
    InvalidCase(
        "duplicate-filter",
        _append_copy(lambda d: _alpha_groups(d)[1]["members"][0]["filters"], 0),
        f"{_GANG}.podGroups[1].members[0].filters[1]",
        "Duplicate value",
        alpha=True,
    ),
    # topology: all three fields are required
    InvalidCase(
        "topology-missing-name",
        _delete(lambda d: _pod_group(d)["topology"], "topologyName"),
        f"{_GANG}.podGroup.topology.topologyName",
        "Required value",
    ),
    InvalidCase(
        "topology-missing-required-level",
        _delete(lambda d: _pod_group(d)["subGroups"][1]["topology"], "requiredTopologyLevel"),
        f"{_GANG}.podGroup.subGroups[1].topology.requiredTopologyLevel",
        "Required value",
    ),
    InvalidCase(
        "topology-missing-preferred-level",
        _delete(lambda d: _pod_group(d)["topology"], "preferredTopologyLevel"),
        f"{_GANG}.podGroup.topology.preferredTopologyLevel",
        "Required value",
    ),
    # types and unknown fields
    InvalidCase(
        "wrong-type",
        _set(lambda d: _child(d, 1)["scaleDefinition"], "replicasPath", 3),
        f"{_SD}.childComponents[1].scaleDefinition.replicasPath",
        "must be of type string",
    ),
    InvalidCase(
        "unknown-field",
        _set(lambda d: _child(d, 1)["specDefinition"], "fragmentedPodDefinition", {"imagePath": ".x"}),
        f"{_SD}.childComponents[1].specDefinition.fragmentedPodDefinition",
        "unknown field",
    ),
)
