"""The producer recipes docs/producers.md and docs/deploy.md give, checked where running
them needs more than this machine has (tests/docs/test_command_blocks.py runs the rest):
each openlineage-python configuration is installed by its own section's `pip install`, the
Airflow DAG to copy compiles and agrees with its configuration and the front page's, and
the admin steps for revoking a token are the admin's."""

import ast
import configparser
import inspect
import json
import re
import shlex
import sys
from importlib.metadata import packages_distributions

import pytest
import yaml
from django.contrib import admin
from openlineage.client.transport import get_default_factory
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from catalog.front.snippets import TOKEN_PLACEHOLDER, snippets
from ingest.models import ApiToken
from tests.docs.blocks import ROOT, Block, sections
from tests.docs.installed import closure

PRODUCERS = ROOT / "docs" / "producers.md"
DAG = ROOT / "examples" / "airflow" / "shop_orders.py"
DOC_URL = "http://localhost:8000"


def pip_installs(section: list[Block]) -> list[Requirement]:
    """The requirements of every `pip install` line in the section's command blocks."""
    found = []
    for block in section:
        if not block.is_command:
            continue
        for line in block.text.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["pip", "install"]:
                found += [Requirement(word) for word in words[2:] if not word.startswith("-")]
    return found


def transport_configurations() -> list[tuple[str, dict]]:
    return [
        (title, config["transport"])
        for title, section in sections(PRODUCERS).items()
        for block in section
        if block.language == "yaml"
        and isinstance(config := yaml.safe_load(block.text), dict)
        and isinstance(config.get("transport"), dict)
    ]


def distributions_needed(transport: dict) -> set[str]:
    """The distributions the module of the configuration's transport imports (openlineage-python
    builds the transport its `type` names), by canonical name; the standard library owns none."""
    module = sys.modules[get_default_factory().transports[transport["type"]].__module__]
    imported = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    owners = packages_distributions()
    return {canonicalize_name(owner) for name in imported for owner in owners.get(name, [])}


@pytest.mark.parametrize(
    ("section", "transport"),
    transport_configurations(),
    ids=lambda value: value if isinstance(value, str) else value["type"],
)
def test_each_openlineage_python_configuration_is_installed_by_its_section(
    section: str, transport: dict
) -> None:
    """A reader who copies the section gets a client that can build its transport: the
    Kafka transport needs confluent-kafka, which only the client's `kafka` extra installs."""
    installed = closure(pip_installs(sections(PRODUCERS)[section]))
    assert "openlineage-python" in installed, f"{section}: no `pip install openlineage-python`"
    assert distributions_needed(transport) - installed == set()


def airflow_section() -> list[Block]:
    (title,) = [title for title in sections(PRODUCERS) if title.startswith("Airflow")]
    return sections(PRODUCERS)[title]


def test_the_airflow_dag_to_copy_compiles_and_runs_as_the_recipe_says() -> None:
    """Airflow itself is too heavy to install here (149 packages; the slow
    tests/producers/test_airflow.py does): the DAG is compiled, and the recipe's commands
    copy this file, name its connection and test its dag_id."""
    tree = ast.parse(DAG.read_text(), str(DAG))
    compile(tree, str(DAG), "exec")
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    dag_id = next(
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "dag_id" and isinstance(keyword.value, ast.Constant)
    )
    (commands,) = [block.text for block in airflow_section() if "airflow dags test" in block.text]
    assert f"cp {DAG.relative_to(ROOT)} " in commands
    assert f"airflow dags test {dag_id}\n" in commands
    (connection,) = re.findall(r"AIRFLOW_CONN_(\w+)=", commands)
    assert connection.lower() in strings
    operators = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id[0].isupper()
    }
    # The provider parses this operator's SQL into inputs, outputs and column lineage.
    assert operators == {"DAG", "SQLExecuteQueryOperator"}


def test_the_airflow_lineage_configuration_is_the_front_pages_and_the_clients() -> None:
    (ini,) = [block.text for block in airflow_section() if block.language == "ini"]
    parser = configparser.ConfigParser()
    parser.read_string(ini)
    transport = json.loads(parser["openlineage"]["transport"])
    (front_page,) = [
        snippet.text for snippet in snippets(DOC_URL) if snippet.producer.startswith("Airflow")
    ]
    assert ini == front_page
    assert transport["auth"] == {"type": "api_key", "apiKey": TOKEN_PLACEHOLDER}
    # The provider hands this JSON to openlineage-python's transport factory.
    assert distributions_needed(transport) <= closure([Requirement("openlineage-python")])


def test_every_front_page_snippet_is_a_block_of_the_producers_page() -> None:
    """docs/producers.md: "The front page (`/`) shows each snippet below filled with the
    server's own URL": each snippet the front page fills in, filled with the page's URL and
    token placeholder, is in one of its blocks as written (the environment's exports amid
    the commands that use them)."""
    blocks = [block.text for section in sections(PRODUCERS).values() for block in section]
    missing = [
        s.producer for s in snippets(DOC_URL) if not any(s.text.strip() in b for b in blocks)
    ]
    assert not missing, f"front-page snippets not in docs/producers.md as written: {missing}"


def test_the_admin_steps_to_revoke_a_token_are_the_admins() -> None:
    """docs/deploy.md's admin steps name an action the token list has, and no field to set
    that the admin shows read-only ("revoked at" is; issue 39)."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    rotate = text[text.index("## Rotate tokens") :].split("\n## ", 1)[0]
    token_admin = admin.site._registry[ApiToken]
    actions = {getattr(token_admin, name).short_description for name in token_admin.actions}
    named = re.findall(r"action \*\*(.+?)\*\*", rotate)
    assert named and set(named) <= actions
    read_only = {
        str(ApiToken._meta.get_field(name).verbose_name) for name in token_admin.readonly_fields
    }
    to_set = set(re.findall(r"""set ["*]+([\w ]+?)["*]+""", rotate))
    assert to_set & read_only == set()
