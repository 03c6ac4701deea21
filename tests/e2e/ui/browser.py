"""Headless Chromium for the web view tests (Debian's ``chromium`` and ``chromium-driver``, driven by
Selenium with both paths given, so Selenium Manager downloads nothing), and what the tests read of
the page: the list's rows, the page loaded, the namespace filter, the browser's errors."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .kliui import wait_for

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@contextmanager
def screenshots(where: Path) -> Iterator[Path]:
    """Screenshots saved under ``where`` (printed), copied to ``$KARTA_UI_SCREENS`` when set."""
    print(f"\nweb view screenshots: {where}")
    yield where
    target = os.environ.get("KARTA_UI_SCREENS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for shot in where.glob("*.png"):
            shutil.copy(shot, Path(target) / shot.name)


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """A Chrome WebDriver on headless Chromium (1400x1000, the browser's log kept), quit afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM.is_file() and CHROMEDRIVER.is_file(), "apt-get install -y chromium chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def page_rows(driver: Any) -> dict[str, dict[str, str]]:
    """The list's rows as the page shows them, by ``Kind/name`` (``gangTitle``: the Gang cell's
    tooltip, the full sentence its short text stands for)."""
    script = """
    return [...document.querySelectorAll('#body tr[data-id]')].map(tr => {
      const c = tr.querySelectorAll('td');
      return {kind: c[0].textContent, namespace: c[1].textContent, name: c[2].textContent,
              status: c[3].textContent, pods: c[5].textContent, gpus: c[6].textContent,
              gang: c[7].textContent, gangTitle: c[7].title};
    });"""
    return {f"{r['kind']}/{r['name']}": r for r in driver.execute_script(script)}


def truncated_cells(driver: Any) -> list[str]:
    """The list's shown headers and cells whose text does not fit their column (cut with an
    ellipsis), as ``header: text`` and ``Kind/name: text``; empty when every one reads whole."""
    script = """
    const cut = (cell) => cell.clientWidth > 0 && cell.scrollWidth > cell.clientWidth;
    const heads = [...document.querySelectorAll('#rows thead th')].filter(cut)
      .map(th => `header: ${th.textContent}`);
    const cells = [...document.querySelectorAll('#body tr[data-id] td')].filter(cut)
      .map(td => {
        const c = td.parentNode.children;
        return `${c[0].textContent}/${c[2].textContent}: ${td.textContent}`;
      });
    return [...heads, ...cells];
    """
    return list(driver.execute_script(script))


def queue_column_shown(driver: Any) -> bool:
    """Whether the list's Queue column (the 9th) is displayed."""
    script = """
    const th = document.querySelector('#rows thead th:nth-child(9)');
    return th.offsetWidth > 0 && getComputedStyle(th).visibility !== 'hidden';"""
    return bool(driver.execute_script(script))


def load(driver: Any, url: str) -> None:
    """Open ``url`` and wait until the page has loaded its first rows."""
    driver.get(url)
    wait_for(
        "the page to load", lambda: driver.execute_script("return document.body.dataset.loaded") == "true"
    )


def filter_namespace(driver: Any, namespace: str) -> None:
    from selenium.webdriver.support.ui import Select

    wait_for(
        "the namespace option",
        lambda: driver.execute_script(
            "return [...document.querySelectorAll('#f-namespace option')]"
            ".some(o => o.value === arguments[0])",
            namespace,
        ),
    )
    Select(driver.find_element("id", "f-namespace")).select_by_value(namespace)


def errors(driver: Any) -> list[Any]:
    """What the browser logged as SEVERE (a script error, a failed request)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
