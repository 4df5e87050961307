# askserver: `make run` serves the embedded default, `make test` runs what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

HOST ?= 127.0.0.1
PORT ?= 8000
SERVER ?= daphne
# The origin people reach `make run` at: the links they follow (mail, URL mode, progress) are built
# from it alone, and a request naming another port is refused. An ASKSERVER_PUBLIC_URL already set
# (a proxy in front) wins.
PUBLIC_URL ?= $(or $(ASKSERVER_PUBLIC_URL),http://$(HOST):$(PORT))
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

# The first Python >= 3.12 on this machine (python3.12, python3.13, python3, then pyenv's).
PYTHON ?= $(shell for p in python3.12 python3.13 python3 $$HOME/.pyenv/versions/3.12*/bin/python $$HOME/.pyenv/versions/3.13*/bin/python; do \
	"$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { command -v "$$p"; break; }; done)

.PHONY: help venv run test lint typecheck docs pytest conformance clean bench soak

help:
	@echo "make run          serve askserver on http://$(HOST):$(PORT) (PORT=..., HOST=..., SERVER=daphne|uvicorn, PUBLIC_URL=...)"
	@echo "make test         lint, type-check, the docs build, the whole test suite and the conformance suite"
	@echo "make docs         build the docs site strictly into $(SITE) (no broken link, no page outside the nav)"
	@echo "make conformance  the official MCP conformance suite, both eras (installs Node 22 once)"
	@echo "make bench        throughput, ops (logging cost), memory, resume, durability, tasks, held, inbox (two CPUs)"
	@echo "make soak         20 minutes of asks at a steady rate: memory and open files stay flat"

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "askserver needs Python >= 3.12; set PYTHON=/path/to/python3.12" >&2; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[redis,postgres,uvicorn]' --group test --group dev --group docs
	@touch $@

venv: $(STAMP)

run: $(STAMP)
	$(PY) manage.py migrate --noinput
	@echo
	@echo "  MCP endpoint:  http://$(HOST):$(PORT)/mcp"
	@$(PY) manage.py quickstart --url $(PUBLIC_URL)/
	@echo
ifeq ($(SERVER),uvicorn)
	ASKSERVER_PUBLIC_URL=$(PUBLIC_URL) exec $(VENV)/bin/uvicorn askserver.asgi:application --host $(HOST) --port $(PORT) --no-access-log
else
	ASKSERVER_PUBLIC_URL=$(PUBLIC_URL) exec $(VENV)/bin/daphne -b $(HOST) -p $(PORT) askserver.asgi:application
endif

# The import contracts in pyproject.toml ([tool.importlinter]) are the architecture's written form.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy ask_mcp askserver .ci/conformance.py tests/support/conformance

# The docs site, from docs/ as mkdocs.yml lays it out. --strict turns every warning into a failure:
# a broken link or anchor, a page left out of the nav. It builds offline and loads nothing from outside.
SITE ?= test-output/site
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(SITE)

pytest: $(STAMP)
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# The official suite against a live server with the Conformance fixture; Node 22 and the suite
# are installed from the npm registry into .cache/conformance on first use.
conformance: $(STAMP)
	$(PY) .ci/conformance.py

test: lint typecheck docs pytest conformance

clean:
	rm -rf $(VENV) var test-output .cache .pytest_cache .mypy_cache .ruff_cache

SDK_VENV := bench/.venv-sdk

# The SDK peer runs on the same uvicorn stack as askserver (its C parser and event loop).
$(SDK_VENV)/.installed-stamp: Makefile
	@test -x $(SDK_VENV)/bin/python || $(PYTHON) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "mcp==2.3.0" \
		uvicorn "httptools>=0.6" "uvloop>=0.21"
	@touch $@

bench: $(STAMP) $(SDK_VENV)/.installed-stamp
	$(PY) -m bench.run throughput
	$(PY) -m bench.run ops
	$(PY) -m bench.run memory
	$(PY) -m bench.run resume
	$(PY) -m bench.run durability
	$(PY) -m bench.run tasks
	$(PY) -m bench.run held
	$(PY) -m bench.run inbox

soak: $(STAMP)
	$(PY) -m bench.run soak --minutes 20
