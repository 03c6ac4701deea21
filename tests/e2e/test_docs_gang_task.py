"""The "gang-schedule a new CRD" task (docs/tasks/gang-schedule.md, issue 28's done-when) followed
as written: every command block of its numbered steps runs in order, in one bash session, from
the top of the checkout, as a new user types them.

One change only: the page's ``hack/cluster/up.sh`` and ``down.sh`` get ``--dir`` with a directory
of the test's own, so that the run never meets another control plane of the machine. The page
starts its own cluster (with kube-scheduler and kube-controller-manager), the Karta CRD, the
FineTune CRD and Karta of examples/finetune, karta-controller on its default ports, the pods and
three then four fake GPU Nodes; the test checks what the page says happens: none of the five pods
bound on three 8-GPU Nodes, all five once the fourth joins, and the FineTune Initializing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "docs"))
from blocks import REPO, blocks

PAGE = REPO / "docs" / "tasks" / "gang-schedule.md"


def _script(work: Path) -> str:
    text = PAGE.read_text()
    end = text[: text.index("\n## More")].count("\n") + 1  # the numbered steps only
    commands = [c.line for b in blocks(PAGE) if b.lineno < end for c in b.commands]
    script = "\n".join(commands)
    up = "hack/cluster/up.sh --controllers"
    assert script.count(up) == 1 and script.count("hack/cluster/down.sh") == 1
    script = script.replace(up, f"{up} --dir {work}").replace(
        "hack/cluster/down.sh", f"hack/cluster/down.sh --dir {work}"
    )
    # Whatever happens, the controller and the cluster go (the page's last step does it too).
    down = f"bash hack/cluster/down.sh --dir {work} >/dev/null 2>&1 || true"
    cleanup = f"trap 'kill $(jobs -p) 2>/dev/null || true; {down}' EXIT"
    return f"{cleanup}\n{script}\n"


def test_the_gang_scheduling_task_works_as_written(tmp_path: Path) -> None:
    script = _script(tmp_path / "cluster")
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}\n{out}\n{done.stderr[-4000:]}"
    assert "OK: acme-ai-finetune-v1 is a valid Karta definition" in out
    assert "podgroup.scheduling.k8s.io/llama-ft-ft   Gang" in out
    assert out.count("llama-ft-ft") >= 6  # the PodGroup, and every pod's GANG column
    three_nodes, four_nodes = out.split("fake-gpu-node-3 ready", 1)
    assert "0/5 bound, min 5 not met (coordinator 0/1, trainer 0/4)" in three_nodes
    assert "min 5 cannot be satisfied" in three_nodes or "minCount (5) cannot be satisfied" in three_nodes
    assert "5/5 bound, min 5 met" in four_nodes
    assert "research    llama-ft   FineTune   Initializing" in four_nodes
