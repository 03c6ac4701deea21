"""The web view's Kueue views in headless Chromium on ``kli ui`` against the real Kueue
(``kueue_cluster``): two PyTorchJobs of 8 GPUs on a ClusterQueue of 8 GPUs, each with the
Workload karta's controller creates for it (:func:`tests.e2e.queued.two_queued_jobs`). The list's
queue column reads ``team:Admitted`` and ``team:Pending`` (the same facts as ``kli get``'s QUEUE
column), the pending job's page says why it waits (Kueue's message) and its position (Kueue's
visibility API, read when the page is opened), and the queue page (linked
from the header since Kueue is served) draws the ClusterQueue with 8/8 GPUs used as a full bar,
1 admitted and 1 pending, with its LocalQueue. The browser logs no error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..kubehttp import KubeHTTP
from ..queued import two_queued_jobs
from ..test_kueue_live import GPU, Queues
from ..test_kueue_live import queues as queues  # the fixture
from .browser import (
    errors,
    filter_namespace,
    headless_chromium,
    load,
    queue_column_shown,
    screenshots,
    truncated_cells,
)
from .kliui import kli_ui, rows, wait_for

__all__ = ["queues"]  # the fixture

pytestmark = pytest.mark.slow

_QUEUE_CELLS = """
return Object.fromEntries([...document.querySelectorAll('#body tr[data-id]')].map(tr => {
  const c = tr.querySelectorAll('td');
  return [c[2].textContent, c[8].textContent];
}));"""


@pytest.fixture
def screens(tmp_path: Path) -> Iterator[Path]:
    with screenshots(tmp_path / "screens") as where:
        where.mkdir()
        yield where


def test_the_queue_column_the_workload_page_and_the_queue_page(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, tmp_path: Path, screens: Path
) -> None:
    two_queued_jobs(kueue_cluster, queues, corpus)
    wait_for(
        "the ClusterQueue's status to count them",
        lambda: (lambda st: (st.get("admittedWorkloads"), st.get("pendingWorkloads")) == (1, 1))(
            queues.get_cq().get("status") or {}
        ),
    )
    with kli_ui(kueue_cluster.kubeconfig, tmp_path / "kli-ui") as url, headless_chromium() as browser:
        wait_for(
            "both rows with their queue state",
            lambda: (
                sorted((r.get("queue") or {}).get("text", "") for r in rows(url, namespace=queues.ns))
                == [f"{queues.lq}:Admitted", f"{queues.lq}:Pending"]
            ),
        )
        load(browser, url)
        filter_namespace(browser, queues.ns)
        cells = wait_for(
            "the queue cells",
            lambda: (lambda c: c if len(c) == 2 else None)(browser.execute_script(_QUEUE_CELLS)),
        )
        assert cells == {"first": f"{queues.lq}:Admitted", "second": f"{queues.lq}:Pending"}
        assert queue_column_shown(browser) and truncated_cells(browser) == []
        link = browser.find_element("id", "queues-link")
        assert link.is_displayed()
        browser.save_screenshot(str(screens / "kueue-1-list.png"))

        browser.find_element("link text", "second").click()
        detail = wait_for(
            "the pending job's page",
            lambda: (lambda e: e if e.is_displayed() and "Queue" in e.text else None)(
                browser.find_element("id", "detail-view")
            ),
        )
        assert (
            f"{queues.lq}: Pending, position 1 in ClusterQueue {queues.cq}, 1 in LocalQueue {queues.lq} "
            f"(Pending: couldn't assign flavors to pod set worker: insufficient "
            f"unused quota for {GPU} in flavor {queues.flavor}, 8 more needed)"
        ) in detail.text
        assert "position not shown" not in detail.text

        link = browser.find_element("id", "queues-link")
        link.click()
        box = wait_for(
            "the ClusterQueue on the queue page",
            lambda: next(
                iter(
                    browser.find_elements("css selector", f'#queues-view article.cq[data-name="{queues.cq}"]')
                ),
                None,
            ),
        )
        assert f"ClusterQueue {queues.cq}" in box.text
        assert "1 admitted, 1 reserving quota, 1 pending" in box.text
        gpu = box.find_element("css selector", f'tr[data-resource="{GPU}"]')
        assert gpu.find_element("css selector", "td.used").text == "8/8"
        fill = gpu.find_element("css selector", ".quota-bar .fill")
        track = gpu.find_element("css selector", ".quota-bar")
        assert "full" in (fill.get_attribute("class") or "")
        assert abs(fill.size["width"] - track.size["width"]) <= 2  # drawn full: 8 of 8
        cpu = box.find_element("css selector", 'tr[data-resource="cpu"]')
        assert cpu.find_element("css selector", "td.used").text == "2/32"  # two 1-CPU workers
        assert (
            0 < cpu.find_element("css selector", ".quota-bar .fill").size["width"] < track.size["width"] / 4
        )
        assert f"{queues.ns}/{queues.lq}: 1 admitted, 1 pending" in box.text
        browser.save_screenshot(str(screens / "kueue-2-queue-page.png"))
        assert errors(browser) == []
