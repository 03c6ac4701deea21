"""The web view with 5,000 workloads, run on demand: ``.venv/bin/python bench/ui_load.py``.

Starts a private control plane (hack/cluster: etcd + kube-apiserver, no controllers), creates
``--workloads`` batch Jobs (5,000 by default, in 10 namespaces, ~1 in 7 of them with a Failed
condition, with gang instructions from the built-in definition) plus one pod each for a tenth of
them, then starts what ``kli ui`` runs (:class:`karta.ui.ClusterSource` and
:class:`karta.ui.UiServer`) and prints:

* the source's time from start until every row is in the store (list + watch of every covered
  type, pods and group objects, rows computed);
* in headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium): the
  time from navigation until the page has loaded every row and drawn the list (the page's own
  ``performance.now()`` figure and the wall-clock one), how many table rows the DOM holds (the
  list is virtualised: only the visible window), the longest frame while scrolling the whole
  list and the time a text filter takes to apply;
* the API's ``/api/workloads?limit=1000`` latency.

``--kubeconfig`` uses an existing cluster instead (the Jobs are created there, in namespaces
``karta-ui-bench-*``, and deleted afterwards).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from karta.definitions import DefinitionStore  # noqa: E402
from karta.kube import ConfigOverrides, KubeClient  # noqa: E402
from karta.ui import ClusterSource, RowStore, UiServer  # noqa: E402

NAMESPACES = 10


def controlplane() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "karta_bench_cp", ROOT / "hack" / "cluster" / "controlplane.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def job(index: int) -> dict[str, Any]:
    container = {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": {"cpu": "1"}, "limits": {"nvidia.com/gpu": 1 + index % 4}},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"train-{index:05d}", "labels": {"karta-bench": "ui"}},
        "spec": {
            "parallelism": 1 + index % 3,
            "completions": 1 + index % 3,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }


def populate(client: KubeClient, count: int) -> list[str]:
    namespaces = [f"karta-ui-bench-{i}" for i in range(NAMESPACES)]
    for name in namespaces:
        client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def create(index: int) -> None:
        namespace = namespaces[index % NAMESPACES]
        created = client.create(job(index), namespace=namespace)
        if index % 7 == 0:
            gave_up = {"status": "True", "reason": "BackoffLimitExceeded", "message": "gave up"}
            conditions = [{"type": "FailureTarget", **gave_up}, {"type": "Failed", **gave_up}]
            status = {"startTime": "2026-01-01T00:00:00Z", "conditions": conditions}
            client.patch(
                "jobs.batch",
                created["metadata"]["name"],
                {"status": status},
                namespace=namespace,
                subresource="status",
            )
        if index % 10 == 0:
            owner = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": created["metadata"]["name"],
                "uid": created["metadata"]["uid"],
                "controller": True,
            }
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{created['metadata']['name']}-0", "ownerReferences": [owner]},
                "spec": job(index)["spec"]["template"]["spec"],
            }
            client.create(pod, namespace=namespace)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, range(count)))
    print(f"created {count} Jobs (and {count // 10} pods) in {time.monotonic() - started:.1f} s")
    return namespaces


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


LONGEST_FRAME = """
const done = arguments[arguments.length - 1];
const stride = arguments[0];
const most = arguments[1];
const scroller = document.getElementById("scroller");
let last = 0, frames = 0;
const times = [];
function step() {
  const now = performance.now();
  if (last) times.push(now - last);
  last = now; frames++;
  if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2 || frames > most) {
    times.sort((a, b) => a - b);
    const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
    done([at(0.5), at(0.95), times[times.length - 1], frames, document.querySelectorAll("#body tr").length]);
    return;
  }
  scroller.scrollTop += stride || scroller.clientHeight * 3;
  requestAnimationFrame(step);
}
requestAnimationFrame(step);
"""

FILTER = """
const done = arguments[arguments.length - 1];
const input = document.getElementById("f-text");
const started = performance.now();
input.value = "train-0499";
input.dispatchEvent(new Event("input"));
const check = () => {
  const count = document.getElementById("count").textContent;
  if (count.startsWith("10 of") || count.startsWith("1 of") || performance.now() - started > 5000) {
    done([performance.now() - started, count]);
  } else requestAnimationFrame(check);
};
check();
"""


def measure(kubeconfig: Path, count: int) -> None:
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
    namespaces = populate(client, count)
    rows = RowStore()
    store = DefinitionStore.load()
    source = ClusterSource(client, lambda: store, store=rows, cluster="bench")
    server = UiServer(rows, {"bench": source.detail}, port=0, allowed_hosts={"127.0.0.1"})
    started = time.monotonic()
    source.start()
    while len(rows) < count or not source.synced.is_set():
        time.sleep(0.05)
        if time.monotonic() - started > 300:
            raise SystemExit(f"only {len(rows)} rows after 300 s")
    print(f"source: {len(rows)} rows in the store {time.monotonic() - started:.2f} s after start")
    server.start()
    try:
        api = []
        for _ in range(5):
            t = time.monotonic()
            with urllib.request.urlopen(f"{server.url}api/workloads?limit=1000") as answer:
                size = len(answer.read())
            api.append(time.monotonic() - t)
        print(f"API: /api/workloads?limit=1000 best {min(api) * 1000:.0f} ms ({size / 1e6:.2f} MB)")
        driver = browser()
        try:
            driver.set_script_timeout(300)
            for attempt in range(3):
                t = time.monotonic()
                driver.get(server.url)
                while driver.execute_script("return document.body.dataset.loaded") != "true":
                    time.sleep(0.01)
                wall = time.monotonic() - t
                page_ms = driver.execute_script("return Number(document.body.dataset.loadMs)")
                shown = driver.execute_script("return document.getElementById('count').textContent")
                dom_rows = driver.execute_script("return document.querySelectorAll('#body tr').length")
                print(
                    f"browser load {attempt + 1}: {wall * 1000:.0f} ms wall (page: {page_ms} ms to fetch "
                    f"and draw), '{shown}', {dom_rows} <tr> in the DOM"
                )
            for stride, most, how in ((0, 400, "3 screens"), (120, 300, "120 px (a wheel notch)")):
                driver.execute_script("document.getElementById('scroller').scrollTop = 0")
                p50, p95, worst, frames, dom_rows = driver.execute_async_script(LONGEST_FRAME, stride, most)
                print(
                    f"scrolling {how} a frame: {frames} frames, frame time p50 {p50:.0f} ms, "
                    f"p95 {p95:.0f} ms, longest {worst:.0f} ms; {dom_rows} <tr> in the DOM"
                )
            took, count_text = driver.execute_async_script(FILTER)
            print(f"text filter: {took:.0f} ms until '{count_text}'")
        finally:
            driver.quit()
    finally:
        server.close()
        source.stop()
        for name in namespaces:
            client.delete("namespaces", name)
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", type=int, default=5000)
    parser.add_argument("--kubeconfig", type=Path)
    args = parser.parse_args()
    if args.kubeconfig:
        measure(args.kubeconfig, args.workloads)
        return
    cp_mod = controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries(), controllers=False)
    with (
        tempfile.TemporaryDirectory() as tmp,
        cp_mod.ControlPlane(config=config, workdir=Path(tmp) / "cp") as cp,
    ):
        measure(cp.kubeconfig, args.workloads)


if __name__ == "__main__":
    main()
