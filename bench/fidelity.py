"""Fidelity of the catalog on real producers' events (issue 12): what is kept and shown.

Reads every JSON document in the corpus folders (default: tests/fixtures/openlineage and
tests/fixtures/fidelity; a file may hold one event or an array), on a scratch database
(recreated): validates and stores them as ingest does, derives everything, then prints
  1. events: stored, stored with facet problems (by facet), refused (by first path);
  2. job-dataset pairs read or written by runs, and how many the graph draws: as halves of
     dataset → dataset edges (the old graph) and as job edges (now);
  3. runIds sent by more than one job, and the runs kept for them;
  4. datasets titled by a storage location although they have a logical name, under the
     old rule (first alias by namespace, name) and now.

Usage: .venv/bin/python bench/fidelity.py [--database-url URL] [FOLDER ...]
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FOLDERS = [ROOT / "tests/fixtures/openlineage", ROOT / "tests/fixtures/fidelity"]
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_fidelity"


def _setup(database_url: str) -> None:
    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(database_url)


def _documents(folders: list[Path]) -> list[object]:
    documents: list[object] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            if "spec" in path.relative_to(folder).parts[:1]:
                continue  # the spec's schema files are not events
            try:
                document = orjson.loads(path.read_bytes())
            except orjson.JSONDecodeError:
                continue
            documents.extend(document if isinstance(document, list) else [document])
    return documents


def _store(documents: list[object]) -> None:
    from core.problems import Problem
    from ingest.metrics import problem_label
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    records, refused, warned = [], Counter(), Counter()
    for document in documents:
        try:
            record = validate_openlineage(document)
        except Problem as problem:
            refused[problem.errors[0].path if problem.errors else problem.title] += 1
            continue
        records.append(record)
        for label in {problem_label(w.path, w.facet) for w in record.warnings}:
            warned[label] += 1
    stored = record_events(records)
    with_warnings = sum(1 for record in records if record.warnings)
    print(f"documents: {len(documents)}")
    print(
        f"stored: {len(records)} ({sum(s.created for s in stored)} new), with facet "
        f"problems (each refused before issue 12): {with_warnings}, refused (no usable "
        f"core: partial matchers and templates among them): {sum(refused.values())}"
    )
    for label, count in warned.most_common(12):
        print(f"  facet problems in {label}: {count} events")
    for path, count in refused.most_common(8):
        print(f"  refused at {path}: {count}")


def _report() -> None:
    from django.db import connection

    from catalog.services.derivation.batch import derive_pending_batch
    from catalog.services.display_names import STORAGE, TABLE_SYMLINK, scheme_rank

    while derive_pending_batch(0, 500).claimed:
        pass
    with connection.cursor() as cursor:
        cursor.execute("SELECT derivation_status, count(*) FROM ingest_event GROUP BY 1 ORDER BY 1")
        print("derivation:", dict(cursor.fetchall()))
        cursor.execute(
            "SELECT DISTINCT r.job_id, a.dataset_id, rd.direction FROM catalog_run_dataset rd "
            "JOIN catalog_run r ON r.id = rd.run_id "
            "JOIN catalog_dataset_alias a ON a.id = rd.alias_id"
        )
        pairs = set(cursor.fetchall())
        cursor.execute(
            "SELECT job_id, source_id, 'input' FROM catalog_lineage_edge UNION "
            "SELECT job_id, target_id, 'output' FROM catalog_lineage_edge"
        )
        old = set(cursor.fetchall())
        cursor.execute("SELECT job_id, dataset_id, direction FROM catalog_job_edge")
        now = set(cursor.fetchall())
        print(
            f"job-dataset pairs read or written by runs: {len(pairs)}; drawn as halves of "
            f"dataset->dataset edges (old graph): {len(pairs & old)}; drawn as job edges "
            f"(now): {len(pairs & now)}"
        )
        cursor.execute(
            "SELECT count(DISTINCT run_uuid), count(*) FROM catalog_run WHERE shares_run_id"
        )
        shared_ids, shared_runs = cursor.fetchone()
        print(f"runIds sent by more than one job: {shared_ids}, runs kept for them: {shared_runs}")
        cursor.execute(
            "SELECT d.display_rank, array_agg(a.namespace || chr(1) || a.name || chr(1) "
            "|| a.is_table_name::text) FROM catalog_dataset d "
            "JOIN catalog_dataset_alias a ON a.dataset_id = d.id GROUP BY d.id"
        )
        old_storage = now_storage = with_logical = 0
        for display_rank, names in cursor.fetchall():
            aliases = sorted(tuple(item.split("\x01")) for item in names)

            def rank(alias: tuple[str, ...]) -> int:
                return TABLE_SYMLINK if alias[2] == "true" else scheme_rank(alias[0])

            if min(rank(alias) for alias in aliases) == STORAGE:
                continue  # only storage names known: nothing better to show
            with_logical += 1
            old_storage += rank(aliases[0]) == STORAGE  # the old title: first by (ns, name)
            now_storage += display_rank == STORAGE
        print(
            f"datasets with a logical name ({with_logical}) titled by a storage location: "
            f"old rule {old_storage}, now {now_storage}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    args = parser.parse_args()
    _setup(args.database_url)
    _store(_documents(args.folders))
    _report()


if __name__ == "__main__":
    main()
