# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test install serve worker clean bench

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## make demo: SQLite, in-process tasks, offline data; demo accounts printed; serves on http://$(HOST):$(PORT)
demo: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	$(PY) manage.py runserver $(HOST):$(PORT)

## make test: the whole suite; PostgreSQL/Redis when DATABASE_URL / CELERY_BROKER_URL are set
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

worker: install
	$(VENV)/bin/celery -A rescue_annot worker --loglevel=INFO

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache
