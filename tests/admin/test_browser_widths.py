"""The admin at a laptop's width and a desktop's (issue 39): in a real Chromium at 1,366 and
1,920 px, over the demo's real dbt, Airflow and Spark events, the lineage picture opens with
its focus in view and no label cut, a dbt run's consumers are drawn right of what they read,
the Runs list keeps its rows short and the dashboard uses the width. Screenshots of each
page go to pytest's temporary directory (printed with ``-s``), never into the repository.
"""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from catalog.models import Dataset, Job
from catalog.services import demo as catalog_demo

from .conftest import and_wait

WIDTHS = (1366, 1920)

# Where the picture's frame shows anything: its rect, within the window.
FOCUS_IN_VIEW = """
const canvas = document.querySelector('#lineage-picture .lc-canvas');
const frame = canvas.getBoundingClientRect();
const left = Math.max(frame.left, 0), right = Math.min(frame.left + canvas.clientWidth, innerWidth);
const top = Math.max(frame.top, 0), bottom = Math.min(frame.top + canvas.clientHeight, innerHeight);
const focus = canvas.querySelector('.lc-focus rect').getBoundingClientRect();
return {inside: focus.left >= left && focus.right <= right && focus.top >= top
          && focus.bottom <= bottom,
        focus: [focus.left, focus.right, focus.top, focus.bottom],
        frame: [left, right, top, bottom], scrolls: canvas.scrollWidth > canvas.clientWidth};
"""
# Every text of every node: inside its own box and inside the drawn svg.
CUT_LABELS = """
const svg = document.querySelector('#lineage-picture svg.lc-lineage');
const drawn = svg.getBoundingClientRect();
const cut = [];
for (const node of svg.querySelectorAll('a.lc-node')) {
  const box = node.querySelector('rect').getBoundingClientRect();
  for (const text of node.querySelectorAll('text')) {
    const r = text.getBoundingClientRect();
    if (r.left < box.left || r.right > box.right || r.left < drawn.left || r.right > drawn.right
        || r.top < drawn.top || r.bottom > drawn.bottom) { cut.push(text.textContent); }
  }
}
return cut;
"""
# Edges whose source box is not left of their target box.
LEFTWARD_EDGES = """
const svg = document.querySelector('#lineage-picture svg.lc-lineage');
const at = ref => svg.querySelector(`a.lc-node[data-node="${ref}"] rect`).getBoundingClientRect();
return [...svg.querySelectorAll('path.lc-edge')]
  .filter(edge => at(edge.dataset.source).left >= at(edge.dataset.target).left)
  .map(edge => edge.dataset.source + ' -> ' + edge.dataset.target);
"""
ROW_LINES = """
const rows = [...document.querySelectorAll('#result_list tbody tr')];
const style = getComputedStyle(document.querySelector('#result_list tbody td'));
const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
const results = document.querySelector('#changelist .results');
return {lines: Math.max(...rows.map(row => (row.getBoundingClientRect().height - padding) / line)),
        rows: rows.length, overflow: results.scrollWidth - results.clientWidth};
"""


def _log_in(browser: Any, url: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("root")
    browser.find_element(By.NAME, "password").send_keys("pw")
    and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click)


def _open(browser: Any, url: str, width: int) -> None:
    browser.set_window_size(width, 900)
    browser.get(url)
    browser.execute_script("return new Promise(done => requestAnimationFrame(() => done()))")


@pytest.mark.django_db(transaction=True)
def test_pictures_and_lists_fit_a_laptop_and_a_desktop(
    browser: Any, live_server: Any, superuser: User, tmp_path: Path
) -> None:
    catalog_demo.load_demo()
    mart = Dataset.objects.for_alias(*catalog_demo.COLUMN_LINEAGE).get()
    dbt_run = Job.objects.get(namespace="dbt", parent__isnull=True)
    _log_in(browser, live_server.url)
    pages = {
        # The mart is the last of its chain: its node is at the picture's right end.
        "dataset": f"/admin/catalog/dataset/{mart.pk}/change/?lineage_depth=3",
        "dbt-job": f"/admin/catalog/job/{dbt_run.pk}/change/",
    }
    for width in WIDTHS:
        for name, path in pages.items():
            _open(browser, live_server.url + path, width)
            browser.save_screenshot(str(tmp_path / f"{name}-{width}.png"))
            seen = browser.execute_script(FOCUS_IN_VIEW)
            assert seen["scrolls"], (name, width)  # big enough to need the scrolling
            assert seen["inside"], (name, width, seen)
            assert browser.execute_script(CUT_LABELS) == [], (name, width)
            assert browser.execute_script(LEFTWARD_EDGES) == [], (name, width)

        _open(browser, f"{live_server.url}/admin/catalog/run/", width)
        browser.save_screenshot(str(tmp_path / f"runs-{width}.png"))
        runs = browser.execute_script(ROW_LINES)
        assert runs["rows"] >= 10 and runs["lines"] < 3.5, (width, runs)  # 3 lines at most
        assert runs["overflow"] <= 0, (width, runs)  # every column shown, "Started" too

        _open(browser, f"{live_server.url}/admin/", width)
        browser.save_screenshot(str(tmp_path / f"dashboard-{width}.png"))
        dashboard = browser.execute_script(
            "return document.getElementById('lineage-dashboard').getBoundingClientRect().width"
        )
        assert dashboard > 0.9 * (width - 100), (width, dashboard)  # not 600 px and a margin
    print(f"screenshots in {tmp_path}")
