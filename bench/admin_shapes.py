"""The admin pages that draw a lineage picture, on the worst graph shapes anyone with an
ingest token can plant (issue 27): seconds and bytes per page, in this process.

Shapes, each in its own namespace of one scratch database:
- dense: 50 jobs over 50 datasets, each job reading 10 and writing 10 of them (20 job
  edges a job, cycles everywhere): every picture holds the whole graph.
- fan: one job reading 600 datasets and writing 600 (a wide fan-in and fan-out).
- chain: 300 datasets in a line, each pair joined by its own job.
- budget: 600 datasets and 300 jobs, each job reading 6 and writing 6 of them at random:
  pictures at depth 5 fill the 150-node budget, and the explorer's picture is expanded
  four times (each "+N more" adds up to 50 nodes): the picture's whole budget.

Also the alias-rule patterns of issue 27 (``--rules``): derivation time of 200 names in the
namespace of an overlapping-repeat rule.

Usage: .venv/bin/python bench/admin.py --shapes [--rules] [--database postgres://.../scratch]
       .venv/bin/python bench/admin.py --rules   # the alias rules alone
The database is dropped and made anew (lineage_bench_admin_shapes by default).
"""

import html
import logging
import random
import re
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from bench.common import call_wsgi, migrated_django_without_broker, wsgi_environ

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_admin_shapes"
START = datetime(2026, 11, 1, tzinfo=UTC)
PRODUCER = "https://example.com/bench-admin-shapes"


def run_event(namespace: str, job: str, inputs: list[str], outputs: list[str], index: int) -> bytes:
    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": (START + timedelta(seconds=index)).isoformat(),
            "run": {"runId": str(uuid.UUID(int=index + 1, version=4))},
            "job": {"namespace": namespace, "name": job},
            "inputs": [{"namespace": namespace, "name": name} for name in inputs],
            "outputs": [{"namespace": namespace, "name": name} for name in outputs],
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    )


def shapes() -> dict[str, list[tuple[str, list[str], list[str]]]]:
    """Per shape: (job, inputs, outputs) of each run event."""
    rng = random.Random(27)
    dense_tables = [f"dense.t{i:02}" for i in range(50)]
    dense = []
    for j in range(50):
        picked = rng.sample(dense_tables, 20)
        dense.append((f"dense.job{j:02}", picked[:10], picked[10:]))
    fan = [
        ("fan.job", [f"fan.in{i:03}" for i in range(600)], [f"fan.out{i:03}" for i in range(600)])
    ]
    chain = [(f"chain.job{i:03}", [f"chain.t{i:03}"], [f"chain.t{i + 1:03}"]) for i in range(300)]
    budget_tables = [f"budget.t{i:03}" for i in range(600)]
    budget = []
    for j in range(300):
        picked = rng.sample(budget_tables, 12)
        budget.append((f"budget.job{j:03}", picked[:6], picked[6:]))
    return {"dense": dense, "fan": fan, "chain": chain, "budget": budget}


def plant(token: str) -> None:
    """Every shape's events, posted as a producer would (POST /api/v1/lineage), derived."""
    from catalog.services.derivation.batch import derive_pending_batch
    from config.wsgi import application

    index = 0
    environs = []
    for name, events in shapes().items():
        for job, inputs, outputs in events:
            environs.append(wsgi_environ(run_event(name, job, inputs, outputs, index), token))
            index += 1
    statuses = call_wsgi(application, environs)
    assert all(status.startswith("201") for status in statuses), statuses[:3]
    while derive_pending_batch(0, 500).claimed:
        pass


def pages() -> list[tuple[str, str]]:
    """(shape, path) of the pages to time: dataset, job and explorer pictures."""
    from catalog.models import Dataset, Job

    def dataset(namespace: str, name: str) -> int:
        return Dataset.objects.get(namespace=namespace, name=name).pk

    def job(namespace: str, name: str) -> int:
        return Job.objects.get(namespace=namespace, name=name).pk

    dense, dense_job = dataset("dense", "dense.t00"), job("dense", "dense.job00")
    fan_in, fan_job = dataset("fan", "fan.in000"), job("fan", "fan.job")
    chain = dataset("chain", "chain.t150")
    budget, budget_job = dataset("budget", "budget.t000"), job("budget", "budget.job000")
    return [
        ("dense", f"/admin/catalog/dataset/{dense}/change/"),
        ("dense", f"/admin/catalog/dataset/{dense}/change/?lineage_depth=5"),
        ("dense", f"/admin/catalog/dataset/{dense}/change/?lineage_depth=5&lineage_columns=1"),
        ("dense", f"/admin/catalog/job/{dense_job}/change/?lineage_depth=5"),
        ("dense", f"/admin/lineage/?node=dataset:{dense}&lineage_depth=5"),
        ("fan", f"/admin/catalog/dataset/{fan_in}/change/?lineage_depth=5"),
        ("fan", f"/admin/catalog/job/{fan_job}/change/?lineage_depth=5"),
        ("chain", f"/admin/catalog/dataset/{chain}/change/?lineage_depth=5"),
        ("budget", f"/admin/catalog/dataset/{budget}/change/?lineage_depth=5"),
        ("budget", f"/admin/catalog/job/{budget_job}/change/?lineage_depth=5"),
        # The full budget: the main walk and four expansions (time_pages follows "+N more").
        ("budget", f"/admin/lineage/?node=dataset:{budget}&lineage_depth=5"),
    ]


def fully_expanded(client: Any, path: str) -> str:
    """``path`` with "+N more" markers followed until the picture has its four expansions."""
    for _ in range(4):
        body = client.get(path).content.decode()
        links = [
            html.unescape(link)
            for link in re.findall(r'<a href="([^"]*lineage_expand[^"]*)" class="lc-node', body)
        ]
        deeper = [
            link for link in links if link.count("lineage_expand") > path.count("lineage_expand")
        ]
        if not deeper:
            break
        path = deeper[0].split("#")[0]
    return path


def time_pages(repeat: int) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-admin")
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    print(
        f"{'shape':7} {'page':72} {'median s':>8} {'max s':>6} {'bytes':>9} {'nodes':>5} "
        f"{'edges':>5}  layout"
    )
    worst = 0.0
    for shape, path in pages():
        if path.startswith("/admin/lineage/") and shape == "budget":
            path = fully_expanded(client, path)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(path)
            times.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"{path}: HTTP {response.status_code}")
        body = response.content
        mode = re.search(rb'data-layout="(\w+)"', body)
        mode_text = mode.group(1).decode() if mode else "-"
        nodes = body.count(b'class="lc-node')
        drawn = body.count(b'class="lc-edge ')
        worst = max(worst, max(times))
        print(
            f"{shape:7} {path[:72]:72} {statistics.median(times):8.2f} {max(times):6.2f} "
            f"{len(body):9,} {nodes:5} {drawn:5}  {mode_text}",
            flush=True,
        )
    print(f"slowest page: {worst:.2f} s (max of {repeat})")


def time_rules() -> None:
    """Derivation of 200 names in the namespace of each overlapping-repeat rule."""
    from catalog.models import AliasRule
    from catalog.services.derivation.batch import derive_event_ids
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    logging.getLogger("catalog.names.rules").setLevel(logging.ERROR)  # a warning per timed-out name
    patterns = [r"(a|a)*", r"([a-z]|[a-z0-9])*_v[0-9]", "(no rule)"]
    names = {
        r"(a|a)*": "a" * 40 + "b",
        r"([a-z]|[a-z0-9])*_v[0-9]": "abcdefghij" * 4 + "_vx",
        "(no rule)": "abcdefghij" * 4 + "_vx",  # the same names, derived without a rule
    }
    print(f"\n{'alias rule pattern':32} {'names':>6} {'derive s':>9}")
    for number, pattern in enumerate(patterns):
        namespace = f"rules{number}"
        if pattern != "(no rule)":
            AliasRule.objects.update_or_create(
                slug=f"bench-{number}",
                defaults={
                    "action": "rewrite",
                    "namespace": namespace,
                    "name_pattern": pattern,
                    "target_namespace": namespace,
                    "target_name": "renamed",
                },
            )
        records = [
            validate_openlineage(
                orjson.loads(
                    # Past the character the pattern chokes on, a number keeps names apart.
                    run_event(
                        namespace,
                        f"job{i}",
                        [f"{names[pattern]}{i:03}"],
                        [],
                        10**6 * (number + 1) + i,
                    )
                )
            )
            for i in range(200)
        ]
        ids = [event.id for event in record_events(records)]
        started = time.perf_counter()
        derive_event_ids(ids)
        elapsed = time.perf_counter() - started
        print(f"{pattern:32} {len(ids):6} {elapsed:9.2f}", flush=True)


def main(database: str, repeat: int, shapes: bool, rules: bool) -> None:
    started = time.monotonic()
    migrated_django_without_broker(database)
    from ingest.services import create_token

    if shapes:
        _, token = create_token("bench-shapes", "ingest")
        plant(token)
        print(f"planted the shapes in {time.monotonic() - started:.0f}s", flush=True)
        time_pages(repeat)
    if rules:
        time_rules()


if __name__ == "__main__":  # pragma: no cover - run through bench/admin.py --shapes
    raise SystemExit("run: python bench/admin.py --shapes")
