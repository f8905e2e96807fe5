# The two commands of the README: `make run` and `make test`. Both build their own virtualenv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8000
# `make run` listens on this machine only (DEBUG is on); HOST=0.0.0.0 opens it knowingly.
HOST ?= 127.0.0.1

.PHONY: run test install browser audit lint typecheck schema clean

$(STAMP): pyproject.toml $(wildcard collector/pyproject.toml)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	if [ -f collector/pyproject.toml ]; then $(BIN)/python -m pip install --quiet -e './collector[dev]'; fi
	touch $(STAMP)

install: $(STAMP)

# The admin browser test drives Debian's chromium; only `make test` needs it.
browser:
	@(command -v chromium && command -v chromedriver) >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) || echo "chromium not installed: the admin browser test will skip"

run: install
	@scripts/ensure_services.sh
	HOST=$(HOST) PORT=$(PORT) $(BIN)/python scripts/run_local.py

test: install browser
	@scripts/ensure_services.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy config ingest catalog api
	$(BIN)/python manage.py makemigrations --check --dry-run --settings=config.settings.test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Known-vulnerability audit of the installed dependencies (needs PyPI's JSON API or OSV,
# which this workplace cannot reach; see docs/security.md).
audit: install
	$(BIN)/python -m pip install --quiet pip-audit
	$(BIN)/pip-audit --strict --progress-spinner off

lint:
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy config ingest catalog api

schema: install
	$(BIN)/python manage.py spectacular --settings=config.settings.test --file docs/openapi.yaml

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache staticfiles
