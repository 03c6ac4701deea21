"""Write (or with ``--check`` verify) ``src/karta/extract/_k8s_fields.py`` from the OpenAPI v3
document of the API server ``KUBECONFIG`` points at, which must be the pinned release; run through
``bash hack/k8s-fields.sh``, which starts that server. See :mod:`karta.extract._k8s_fields_build`."""

from __future__ import annotations

import sys

from karta._generated import write_or_check
from karta.extract._k8s_fields_build import COMMAND, OPENAPI_PATH, PINNED_VERSION, TARGET, render
from karta.kube.client import KubeClient


def main(argv: list[str]) -> int:
    if [a for a in argv if a != "--check"]:
        print(
            "usage: python hack/k8s_fields.py [--check]  (KUBECONFIG: the pinned API server)", file=sys.stderr
        )
        return 2
    with KubeClient.from_config() as client:
        version = client.request_json("GET", "/version").get("gitVersion")
        if version != PINNED_VERSION:
            print(f"the API server is {version}, not the pinned {PINNED_VERSION}", file=sys.stderr)
            return 1
        openapi = client.request_json("GET", OPENAPI_PATH)
    return write_or_check(TARGET, render(openapi, version), check="--check" in argv, command=COMMAND)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
