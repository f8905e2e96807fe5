"""A steward's session in a real browser: Debian's chromium, headless, driven by selenium.

Logs in, opens a dataset, follows its lineage links, previews and saves an alias rule and
checks the regrouping; follows the lineage picture's nodes and saves screenshots of it in
test-artifacts/ (gitignored). Skips (never passes) when chromium or its driver is not installed;
``make test`` installs both (apt) and selenium (the ``dev`` extra).
"""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from catalog.models import Dataset, DatasetAlias, Job
from catalog.permissions import STEWARDS

from .conftest import and_wait, ingest_and_derive, lineage_events


def _click_link(driver: Any, text: str) -> None:
    from selenium.webdriver.common.by import By

    xpath = f"//div[@id='content']//a[normalize-space()='{text}']"
    and_wait(driver, driver.find_element(By.XPATH, xpath).click)


@pytest.mark.django_db(transaction=True)
def test_steward_navigates_lineage_and_regroups_with_a_rule(
    browser: Any, live_server: Any, ingest_client: Client, groups: None
) -> None:
    from selenium.webdriver.common.by import By

    ingest_and_derive(ingest_client, lineage_events())
    user = User.objects.create_user("stew", password="a-long-pass-phrase", is_staff=True)
    user.groups.add(Group.objects.get(name=STEWARDS))

    # Log in.
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("stew")
    browser.find_element(By.NAME, "password").send_keys("a-long-pass-phrase")
    and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click)
    assert browser.find_element(By.ID, "lineage-dashboard")  # the dashboard on the index

    # Find the dataset by one of its names, open it.
    browser.get(f"{live_server.url}/admin/catalog/dataset/")
    search = browser.find_element(By.ID, "searchbar")
    search.send_keys("s3://lake/orders")
    and_wait(browser, search.submit)
    and_wait(browser, browser.find_element(By.LINK_TEXT, "lake.orders").click)
    assert "hive://metastore:9083/lake.orders" in browser.title
    page = browser.find_element(By.ID, "content").text
    assert "s3://lake/orders" in page  # its second alias

    # Follow lineage: upstream dataset, then back downstream, then the producing run's job.
    _click_link(browser, "postgres://db:5432/shop.public.orders")
    assert "shop.public.orders" in browser.title
    _click_link(browser, "hive://metastore:9083/lake.orders")
    assert "lake.orders" in browser.title
    _click_link(browser, "etl/load_orders")
    assert "etl/load_orders" in browser.title

    # Write an alias rule, preview what it regroups, then save it.
    browser.get(f"{live_server.url}/admin/catalog/aliasrule/add/")
    fields = {
        "slug": "legacy-orders",
        "namespace": "s3://lake",
        "name_pattern": r"raw/(orders)_v\d+",
        "target_namespace": "s3://lake",
    }
    for name, value in fields.items():
        element = browser.find_element(By.NAME, name)
        element.clear()
        element.send_keys(value)
    target = browser.find_element(By.NAME, "target_name")
    target.clear()
    target.send_keys("orders")
    and_wait(browser, browser.find_element(By.ID, "preview-button").click)
    table = browser.find_element(By.ID, "rule-preview-table").text
    assert "s3://lake/raw/orders_v1" in table and "s3://lake/raw/orders_v2" in table
    assert "2 would move" in browser.find_element(By.ID, "rule-preview-summary").text
    assert not DatasetAlias.objects.filter(reason="rule").exists()  # nothing saved yet
    and_wait(browser, browser.find_element(By.NAME, "_save").click)
    assert "was added successfully" in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text

    # The regrouping: the dataset now lists the legacy names among its aliases.
    target_dataset = DatasetAlias.objects.get(namespace="s3://lake", name="orders").dataset_id
    browser.get(f"{live_server.url}/admin/catalog/dataset/{target_dataset}/change/")
    # The page holds several related tables (impact, changes, ...): read the aliases' own.
    aliases = browser.find_element(By.CSS_SELECTOR, ".field-aliases_table table.lc-related").text
    assert "s3://lake/raw/orders_v1" in aliases
    assert "s3://lake/raw/orders_v2" in aliases
    assert DatasetAlias.objects.get(name="raw/orders_v2").dataset_id == target_dataset


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.mark.django_db(transaction=True)
def test_steward_follows_the_lineage_picture(
    browser: Any, live_server: Any, ingest_client: Client, superuser: User
) -> None:
    """The picture on a dataset page links every node to its page; a click follows it."""
    from selenium.webdriver.common.by import By

    ingest_and_derive(ingest_client, lineage_events())
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("root")
    browser.find_element(By.NAME, "password").send_keys("pw")
    and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click)

    dataset = Dataset.objects.get(name="lake.orders")
    browser.get(f"{live_server.url}/admin/catalog/dataset/{dataset.pk}/change/")
    svg = browser.find_element(By.CSS_SELECTOR, "#lineage-picture svg.lc-lineage")
    assert svg.size["width"] > 300 and svg.size["height"] > 40  # drawn, not collapsed
    links = {
        node.get_attribute("data-node"): node.get_dom_attribute("href")
        for node in svg.find_elements(By.CSS_SELECTOR, "a.lc-node")
    }
    upstream = Dataset.objects.get(name="shop.public.orders")
    downstream = Dataset.objects.get(name="orders_report")
    load, report = Job.objects.get(name="load_orders"), Job.objects.get(name="report")
    assert links[f"dataset:{upstream.pk}"] == f"/admin/catalog/dataset/{upstream.pk}/change/"
    assert links[f"dataset:{downstream.pk}"] == f"/admin/catalog/dataset/{downstream.pk}/change/"
    assert links[f"job:{load.pk}"] == f"/admin/catalog/job/{load.pk}/change/"
    assert links[f"job:{report.pk}"] == f"/admin/catalog/job/{report.pk}/change/"
    focus = svg.find_element(By.CSS_SELECTOR, "a.lc-focus")
    assert focus.get_attribute("data-node") == f"dataset:{dataset.pk}"
    ARTIFACTS.mkdir(exist_ok=True)
    browser.find_element(By.ID, "lineage-picture").screenshot(
        str(ARTIFACTS / "lineage-picture-dataset.png")
    )

    # Follow the upstream dataset's node: its page draws this dataset downstream of it.
    node = svg.find_element(By.CSS_SELECTOR, f'a.lc-node[data-node="dataset:{upstream.pk}"]')
    and_wait(browser, node.click)
    assert "shop.public.orders" in browser.title
    svg = browser.find_element(By.CSS_SELECTOR, "#lineage-picture svg.lc-lineage")
    focus = svg.find_element(By.CSS_SELECTOR, "a.lc-focus")
    assert focus.get_attribute("data-node") == f"dataset:{upstream.pk}"
    assert svg.find_elements(By.CSS_SELECTOR, f'a.lc-node[data-node="dataset:{dataset.pk}"]')
    browser.save_screenshot(str(ARTIFACTS / "lineage-picture-followed.png"))

    # Depth 1 from the report's output cuts lake.orders' upstream: "+1 more" expands it.
    browser.get(f"{live_server.url}/admin/catalog/dataset/{downstream.pk}/change/?lineage_depth=1")
    svg = browser.find_element(By.CSS_SELECTOR, "#lineage-picture svg.lc-lineage")
    assert not svg.find_elements(By.CSS_SELECTOR, f'a[data-node="dataset:{upstream.pk}"]')
    marker = svg.find_element(
        By.CSS_SELECTOR, f'a.lc-node-more[data-node="more:dataset:{dataset.pk}:upstream"]'
    )
    assert marker.text == "+1 more"
    and_wait(browser, marker.click)
    svg = browser.find_element(By.CSS_SELECTOR, "#lineage-picture svg.lc-lineage")
    assert svg.find_elements(By.CSS_SELECTOR, f'a[data-node="dataset:{upstream.pk}"]')
    assert svg.find_element(By.CSS_SELECTOR, "a.lc-focus").get_attribute("data-node") == (
        f"dataset:{downstream.pk}"
    )  # expanded in place: the page's own node stays the focus
    browser.find_element(By.ID, "lineage-picture").screenshot(
        str(ARTIFACTS / "lineage-picture-expanded.png")
    )


@pytest.mark.django_db(transaction=True)
def test_a_first_visitor_starts_at_the_front_page(
    browser: Any, live_server: Any, ingest_client: Client, superuser: User
) -> None:
    """/ shows links and snippets to anyone, the counts only after a staff login, and its
    links lead where they say."""
    from selenium.webdriver.common.by import By

    ingest_and_derive(ingest_client, lineage_events())
    browser.get(f"{live_server.url}/")
    assert browser.title == "Lineage Catalog"
    assert browser.find_element(By.ID, "ingest-url").text == f"{live_server.url}/api/v1/lineage"
    producers = [
        snippet.get_attribute("data-producer")
        for snippet in browser.find_elements(By.CSS_SELECTOR, "pre.snippet")
    ]
    for producer in ("openlineage-python", "dbt-ol", "Airflow", "Spark", "Flink"):
        assert any(name.startswith(producer) for name in producers), producers
    assert not browser.find_elements(By.ID, "health")
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "front-page-anonymous.png"))

    # The API docs link opens Swagger UI (served from our static files).
    and_wait(browser, browser.find_element(By.LINK_TEXT, "API docs").click)
    assert browser.current_url == f"{live_server.url}/api/docs/"
    browser.back()

    # "log in" comes back to the front page, which now shows the counts.
    and_wait(browser, browser.find_element(By.LINK_TEXT, "log in").click)
    browser.find_element(By.NAME, "username").send_keys("root")
    browser.find_element(By.NAME, "password").send_keys("pw")
    and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click)
    assert browser.current_url == f"{live_server.url}/"
    assert browser.find_element(By.ID, "jobs").text == "3"
    assert browser.find_element(By.ID, "pending").text == "0"
    browser.save_screenshot(str(ARTIFACTS / "front-page-staff.png"))
    and_wait(browser, browser.find_element(By.LINK_TEXT, "Lineage explorer").click)
    assert browser.current_url == f"{live_server.url}/admin/lineage/"
