# The two commands of the README: `make run` and `make test`. Both install into .venv from the
# committed uv.lock (docs/adr/0063-locked-installs-with-uv.md): `make run` only what the
# service needs, `make test` the toolchain and the collector package too.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# `make run` listens on this machine only (DEBUG is on); HOST=0.0.0.0 opens it knowingly.
HOST ?= 127.0.0.1
# uv itself comes from PyPI into its own small virtualenv, at this version (pyproject.toml's
# [tool.uv] required-version says the same, so a different uv refuses the lock).
UV_VERSION := 0.13.8
UV_HOME := .uv
UV := $(UV_HOME)/bin/uv
UV_STAMP := $(UV_HOME)/.uv-$(UV_VERSION)
# The machine's Python, never a download; .venv is the project environment.
export UV_PYTHON := $(PYTHON)
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_NO_PROGRESS := 1
# Python writes the bytecode it compiles, under .pycache/ in the checkout, and reuses it
# (ADR 0097). CI and the image's build stage set PYTHONDONTWRITEBYTECODE, and uv installs
# without bytecode, so every process compiled Django, DRF and every test module from source
# again: about 14 of the 21 CPU seconds each pytest process spent collecting the suite, paid by
# each xdist worker, the controller and every server, worker and command a test starts.
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(CURDIR)/.pycache

.PHONY: run demo test test-fast install install-dev lock browser audit lint typecheck schema clean

# pip --target puts uv's binary in $(UV_HOME)/bin without building a virtualenv first (half
# the CPU); where the machine's pip refuses that, a small virtualenv holds it instead.
$(UV_STAMP):
	@echo "[make] installing uv $(UV_VERSION) into $(UV_HOME)/"
	@rm -rf $(UV_HOME)
	@$(PYTHON) -m pip install -qq --disable-pip-version-check --target $(UV_HOME) uv==$(UV_VERSION) 2>/dev/null \
	  || { rm -rf $(UV_HOME) && $(PYTHON) -m venv $(UV_HOME) \
	       && $(UV_HOME)/bin/python -m pip install -qq --disable-pip-version-check uv==$(UV_VERSION); }
	@touch $@

# Exact versions from uv.lock; --frozen never re-resolves, so two clones install the same code.
# --inexact: `make run` after `make test` keeps the toolchain instead of uninstalling it.
# The `local` extra is the development server's reload (watchfiles), nothing else.
install: $(UV_STAMP)
	@test -x $(BIN)/python || echo "[make] first run: installing the service's dependencies from uv.lock into $(VENV)/"
	@$(UV) sync --frozen --inexact --extra local --quiet
	@touch $(VENV)/.installed-stamp  # for scripts that wait until .venv is installed

# The toolchain (the `dev` extra) and the collector package (a workspace member) with its own
# `dev` extra; exact, so the test environment is the lock and nothing else.
install-dev: $(UV_STAMP)
	@echo "[make] installing the test toolchain from uv.lock into $(VENV)/"
	@$(UV) sync --frozen --all-packages --extra dev --extra local --quiet
	@touch $(VENV)/.installed-stamp

# After editing dependencies in pyproject.toml: re-resolve and commit uv.lock.
lock: $(UV_STAMP)
	$(UV) lock

# The admin browser test drives Debian's chromium; only `make test` needs it.
browser:
	@(command -v chromium && command -v chromedriver) >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) || echo "chromium not installed: the admin browser test will skip"

run: install
	@scripts/ensure_services.sh
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python scripts/run_local.py

# Real Airflow, dbt-ol and Spark/Hive events into the catalog `make run` serves (same
# DATABASE_URL), derived at once; twice stores nothing twice. ARGS=--force into a non-empty one.
# The links it prints name HOST and PORT: give it the PORT `make run` was given.
demo: install
	@scripts/ensure_services.sh
	@$(BIN)/python manage.py migrate --verbosity 0
	@$(BIN)/python manage.py load_demo --base-url http://$(HOST):$(PORT) $(ARGS)

# The slowest tests are printed at the end of every run, so a suite that grows is seen growing:
# by wall seconds (--durations) and by CPU seconds, the test's own, its child processes' and
# its PostgreSQL backend's (--cpu-durations, tests/cpu_report.py), the figure a change to a
# test changes even on a machine others load (ADR 0075).
PYTEST_ARGS ?= --durations=15 --cpu-durations=15
# pytest-xdist (docs/adr/0075-parallel-test-workers.md): one worker per core plus two, at
# most 4 (each takes a Redis db of its own, counting down from REDIS_URL's, and pytest-django
# a test database of its own). The suite's tests wait on the processes, servers and Kafka
# consumers they start, and the longest-first schedule runs files of a like length, so
# waiting ones, side by side: with three workers on two cores a fifth of some minutes was
# idle. Four workers on two cores, alternated with three (ADR 0150): pytest 272.9 and 310.2 s
# against 282.4 and 348.3, every test passing. A test file's tests stay on one worker so a
# module's fixtures are built once. The files recorded as longest (tests/file_seconds.json)
# are handed out first, so no worker starts a minute-long file when the others are nearly
# done, and each worker's test database is a copy of one migrated in the run (ADR 0108).
# After adding or changing long tests: `make test PYTEST_ARGS=--record-file-seconds`
# rewrites the table.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n + 2 > 4 ? 4 : n + 2 )))
XDIST ?= -n $(WORKERS) --dist loadfile

# ruff, mypy and the migrations check run beside pytest (scripts/check_and_test.sh): the
# target fails when any of them fails, and prints their output after pytest's.
test: install-dev browser
	@scripts/ensure_services.sh
	$(UV) lock --check
	@scripts/check_and_test.sh $(BIN) $(XDIST) $(PYTEST_ARGS)

# The inner loop, under a minute on two idle cores (ADR 0075, ADR 0113): every test but
# those that start real processes or servers (faults, deploy, Kafka, browser, e2e, producers,
# the webhook worker kill), the files or tests that compute for seconds (long property, fuzz,
# crawl and transactional ones), and the tests tests/test_cpu_seconds.json records above
# FAST_MAX_TEST_CPU CPU seconds (365 of the 2,650 left on 2026-12-07: derivations of real
# producers' streams, the snapshot and query-count pins over big graphs, picture layouts, the import
# rules' walk, Hypothesis properties with many examples). Every app keeps most of its tests
# in it; `make test` still runs every test. A new test runs in it until the table names it:
# `make test PYTEST_ARGS=--record-test-cpu` re-records the whole table (the tests that ran).
# It computes the whole time, so one worker per core: a third or fourth worker would only
# add a test database to copy. ARGS adds pytest arguments: `make test-fast ARGS="-k
# lineage"`; `make test-fast FAST_MAX_TEST_CPU=1000` keeps the costly tests in. A new file or
# test that starts processes belongs in FAST_SKIP (whole files, not even collected) or
# FAST_DESELECT (single tests).
FAST_SKIP := tests/faults tests/e2e tests/producers tests/ingest/kafka \
  tests/deploy/test_run_local.py tests/deploy/test_make_run_ports.py \
  tests/deploy/test_make_run_database.py tests/deploy/test_worker_liveness.py \
  tests/deploy/test_web_server.py tests/deploy/test_web_server_slots.py \
  tests/deploy/test_web_server_body_reads.py \
  tests/deploy/test_worker_metrics_port.py tests/deploy/test_production_settings.py \
  tests/deploy/test_dockerfile.py tests/deploy/test_metrics.py tests/deploy/test_wsgi.py \
  tests/deploy/test_chart.py tests/security/test_log_redaction.py \
  tests/security/test_cursor_fuzz.py \
  tests/admin/test_browser.py tests/admin/test_crawl.py tests/api/test_openapi.py \
  tests/catalog/test_order_independence.py tests/ingest/test_backfill_memory.py \
  tests/notify/test_worker_kill.py tests/catalog/test_rederive_job_killed.py \
  tests/catalog/test_derive_task_retry.py \
  tests/ingest/test_chunked.py \
  tests/ingest/test_fastpath.py tests/security/test_redaction.py tests/api/test_fidelity.py \
  tests/admin/test_query_fuzz.py tests/admin/test_front_page.py tests/api/test_dag_lineage.py \
  tests/admin/test_pages.py tests/security/test_marquez_fuzz.py tests/api/test_read_front.py \
  tests/security/test_derived_text_redaction.py tests/docs/test_command_blocks.py \
  collector/tests/test_never_hurts.py
FAST_DESELECT := \
  tests/admin/test_dead_letter_redaction.py::test_no_dead_letter_page_shows_a_planted_secret \
  tests/security/test_size_limits.py::test_the_export_holds_a_bounded_number_of_bytes_at_once \
  tests/catalog/test_tasks_and_claims.py::test_corpus_in_one_batch_equals_one_event_at_a_time \
  tests/catalog/test_datasets_and_edges.py::test_rederive_equals_incremental_derivation \
  tests/admin/test_lineage_picture.py::test_a_fan_out_of_hundreds_is_cut_by_the_budget_and_drawn_without_overlap \
  tests/security/test_structure_redaction.py::test_walking_a_structure_in_text_is_linear \
  collector/tests/test_sqlalchemy_capture.py::test_pandas_read_sql_and_to_sql_through_an_engine \
  tests/deploy/test_bounded_port_limits.py::test_a_bad_value_stops_the_worker_and_the_consumer_at_start
FAST_XDIST ?= -n auto --maxprocesses=4 --dist loadfile
FAST_MAX_TEST_CPU ?= 0.15
test-fast: install-dev
	@scripts/ensure_services.sh
	$(BIN)/python -m pytest $(FAST_XDIST) --durations=5 --cpu-durations=5 --max-test-cpu=$(FAST_MAX_TEST_CPU) \
	  $(foreach path,$(FAST_SKIP),--ignore=$(path)) \
	  $(foreach test,$(FAST_DESELECT),--deselect=$(test)) $(ARGS)

# Known-vulnerability audit of the installed dependencies (needs PyPI's JSON API or OSV,
# which this workplace cannot reach; see docs/security.md).
audit: install-dev
	$(UV) pip install --quiet --python $(BIN)/python pip pip-audit  # pip-audit reads the env through pip
	$(BIN)/pip-audit --strict --progress-spinner off

lint:
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy config core ingest catalog api

schema: install-dev
	$(BIN)/python manage.py spectacular --settings=config.settings.test --file docs/openapi.yaml

clean:
	rm -rf $(VENV) $(UV_HOME) .pytest_cache .mypy_cache .ruff_cache .pycache staticfiles
