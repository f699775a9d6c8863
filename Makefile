# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test lint install worker clean bench

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

# The test tools (Playwright, hypothesis, datasets, mlcroissant...) only for `make test`.
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

install: $(STAMP)

## make demo: SQLite, in-process tasks, offline data; demo accounts printed; serves on http://$(HOST):$(PORT)
demo: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	$(PY) manage.py runserver $(HOST):$(PORT)

## make test: the whole suite; PostgreSQL/Redis when DATABASE_URL / CELERY_BROKER_URL are set
test: $(TEST_STAMP)
	$(PY) tests/run_suite.py $(PYTEST_ARGS)

## make lint: ruff's checks and its formatter (check only) over the whole tree, as CI runs them
lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

worker: install
	$(VENV)/bin/celery -A rescue_annot worker --loglevel=INFO

bench: $(TEST_STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache
