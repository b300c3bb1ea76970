# The README's two commands: `make run` (the main job) and `make test` (the suite).
# Each creates .venv on first use, so both work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test lint bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,spark,s3]'
	touch $@

run: $(VENV)/.installed
	$(PY) -m quiver.job

test: $(VENV)/.installed
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest -n 2 --dist loadgroup -q

bench: $(VENV)/.installed
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) out
