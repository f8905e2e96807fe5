"""Admin page times on the big store that bench/read.py builds (1,000,000 events,
100,000 datasets, 300,000 edges): every registered model's changelist and a change page,
plus the stewards' usual filters, as a logged-in superuser over HTTP.

Usage: .venv/bin/python bench/read.py --requests 20   # builds lineage_bench_read
       .venv/bin/python bench/admin.py [--repeat 5]
Prints median and max milliseconds per page and flags any page over one second.
"""

import argparse
import re
import secrets
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env, manage, percentile, running_server

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_read"
LIST_MODELS = """
from django.contrib import admin
for model in admin.site._registry:
    first = model.objects.order_by("pk").values_list("pk", flat=True).first()
    print(model._meta.app_label, model._meta.model_name, first or "")
"""
FILTERS = [
    "/admin/ingest/event/?derivation_status__exact=failed",
    "/admin/ingest/event/?kind__exact=run&event_type=COMPLETE",
    "/admin/ingest/event/?received_within=24h",
    "/admin/ingest/event/?q=%23500000",
    "/admin/catalog/run/?state=FAIL",
    "/admin/catalog/dataset/?several_aliases=yes",
    "/admin/catalog/dataset/?q=table_4242",
    "/admin/catalog/lineageedge/?o=-1",
    "/admin/",
]


def login(base: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/admin/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(
        f"{base}/admin/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": token,
            "next": "/admin/",
        },
        headers={"Referer": f"{base}/admin/login/"},
        timeout=30,
    )
    if "logout" not in response.text.lower():
        raise SystemExit("could not log in to the admin")
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    env = bench_env(DATABASE)
    password = secrets.token_urlsafe(16)
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model\n"
        "user, _ = get_user_model().objects.get_or_create(username='bench-admin')\n"
        "user.is_staff = user.is_superuser = True\n"
        f"user.set_password({password!r})\nuser.save()\n",
    )
    counts = manage(
        env,
        "shell",
        "--verbosity",
        "0",
        "-c",
        "from ingest.models import Event; "
        "from catalog.models import Dataset; "
        "print(Event.objects.order_by().count(), Dataset.objects.count())",
    ).split()
    print(f"store: {int(counts[0]):,} events, {int(counts[1]):,} datasets")
    pages = []
    for line in manage(env, "shell", "--verbosity", "0", "-c", LIST_MODELS).splitlines():
        app, model, first = ([*line.split(), ""])[:3]
        pages.append(f"/admin/{app}/{model}/")
        if first:
            pages.append(f"/admin/{app}/{model}/{first}/change/")
    pages += FILTERS
    with running_server(env, workers=2, threads=1) as base:
        session = login(base, "bench-admin", password)
        print(f"{'page':60} {'median ms':>10} {'max ms':>8}")
        slow = 0
        for page in pages:
            times = []
            for _ in range(options.repeat):
                started = time.perf_counter()
                response = session.get(base + page, timeout=60)
                times.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{page}: HTTP {response.status_code}")
            median = percentile(times, 0.5)
            flag = "  OVER 1 s" if median > 1000 else ""
            slow += bool(flag)
            print(f"{page:60} {median:10.0f} {max(times):8.0f}{flag}", flush=True)
        print(f"{len(pages)} pages, {slow} over one second (median of {options.repeat})")


if __name__ == "__main__":
    main()
