"""docs/architecture.md: "``tasks.py`` holds every Celery task and nothing imports it (tasks
are sent by name)", and catalog/tasks.py: each task takes ids (plain JSON, never an object).

Read from the code (every module of the apps, config and the collector, found by walking
them) and from Celery's registry, so a task defined elsewhere, an import of the task
module, or a name sent that no task answers fails here. That running each task twice
changes nothing is checked per task: tests/catalog/test_tasks_and_claims.py (derive),
tests/admin/test_curation.py (rederive job), tests/notify/test_worker_kill.py (delivery),
tests/catalog/test_retention_control_edges.py (retention).
"""

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

from celery import current_app
from django.conf import settings

from catalog import tasks
from catalog.notify.outbox import DELIVER_TASK
from catalog.services.rederive_jobs import REDERIVE_TASK

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "core", "ingest", "catalog", "api", "collector")
TASKS = "catalog/tasks.py"
# What a task may take: ids, or a number (the sweep's age), as JSON carries them.
PLAIN = {"int", "str", "float", "list[int]", "list[str]"}


def _modules() -> Iterator[tuple[str, ast.AST]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            yield name, ast.parse(path.read_text(), filename=name)


def _is_task_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in {"shared_task", "task"}


def task_breaks(modules: Iterator[tuple[str, ast.AST]]) -> list[str]:
    broken = []
    for name, tree in modules:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and name != TASKS
                and any(_is_task_decorator(d) for d in node.decorator_list)
            ):
                broken.append(f"{name}:{node.lineno}: task {node.name} outside {TASKS}")
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            if "catalog.tasks" in imported:
                broken.append(f"{name}:{node.lineno}: imports catalog.tasks")
    return broken


def test_every_task_is_in_the_task_module_and_nothing_imports_it() -> None:
    assert task_breaks(_modules()) == []


def test_a_planted_task_and_import_are_named() -> None:
    planted = ast.parse(
        "from celery import shared_task\nfrom catalog import tasks\n"
        "@shared_task(name='x')\ndef x(): pass\n"
    )
    assert task_breaks(iter([("ingest/planted.py", planted)])) == [
        "ingest/planted.py:2: imports catalog.tasks",
        "ingest/planted.py:4: task x outside catalog/tasks.py",
    ]


def _own_tasks() -> dict[str, object]:
    return {
        name: task
        for name, task in current_app.tasks.items()
        if getattr(task, "__module__", "") == tasks.__name__
    }


def test_every_name_sent_or_scheduled_is_a_task_of_the_module() -> None:
    sent = {settings.LINEAGE["DERIVE_TASK"], REDERIVE_TASK, DELIVER_TASK}
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert sent | scheduled <= _own_tasks().keys()


def test_every_task_takes_ids_or_a_number_only() -> None:
    own = _own_tasks()
    assert len(own) >= 7
    for name, task in own.items():
        for parameter in inspect.signature(task.run).parameters.values():
            spelled = parameter.annotation
            spelled = spelled.__name__ if isinstance(spelled, type) else str(spelled)
            assert spelled in PLAIN, (name, parameter)
