# The README's commands. Everything runs from the project's own virtual environment (.venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8080
SECRET_FILE ?=
REPLICAS ?= 2
# make test and test-fast run the suite on JOBS processes (pytest-xdist), a test file to one worker at a time so
# that its module fixtures (a server, a built copy) start once; docs/testing.md.
JOBS ?= 2
PYTEST_JOBS := -n $(JOBS) --dist loadfile
FRONTAL_PORT ?= 8443
STATE_FILE ?=
# Debian packages the tools need: nginx (the server), openssl (local certificates), wrk (the benchmarks),
# graphviz (corpus graph).
DEBIAN_TOOLS := nginx:nginx openssl:openssl wrk:wrk dot:graphviz chromium:chromium

.PHONY: setup build check check-season evaluate graph test test-fast lint serve serve-topology bench-build bench-nginx \
	bench-frontal bench-release rehearsal clean

$(BIN)/corpus: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/corpus  ## virtual environment with the dependencies; nginx, openssl, wrk, graphviz (dot) and chromium when missing
	@missing=""; for pair in $(DEBIAN_TOOLS); do tool=$${pair%%:*}; package=$${pair#*:}; \
	  command -v $$tool >/dev/null 2>&1 || [ -x /usr/sbin/$$tool ] || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ]; then \
	  echo "missing:$$missing: installing from the Debian packages"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

check: $(BIN)/corpus  ## validate every track's sources (all errors at once)
	$(BIN)/corpus check

build: $(BIN)/corpus  ## compile every track's sources into its build/ and manifest/, its season into season/
	$(BIN)/corpus build
	$(BIN)/corpus build-season

# No track list here: every command without --track works on each track of tracks/ (`corpus tracks`), one
# line per track naming it; TRACK=<piste> selects one.
check-season: $(BIN)/corpus  ## prove each track's season against its build (task table, shortcuts, panel)
	$(BIN)/corpus check-season $(if $(TRACK),--track $(TRACK))

evaluate: $(BIN)/corpus  ## the reference evaluator on every task of every track (TASK=gen-06 for one)
	$(BIN)/corpus evaluate $(if $(TRACK),--track $(TRACK)) $(TASK)

graph: setup  ## draw each task's graph into run/graphs/<piste>/ (reveals the key; TASK=gen-06 for one)
	$(BIN)/corpus graph $(if $(TRACK),--track $(TRACK)) $(TASK)

lint: $(BIN)/corpus  ## ruff, then mypy (strict, pyproject.toml [tool.mypy]) on the package
	$(BIN)/ruff check generator tests bench
	$(BIN)/mypy generator

test: setup  ## lint (ruff, mypy), the season check, then the whole suite (a real nginx included) on JOBS=2 processes
	$(BIN)/ruff check generator tests bench
	$(BIN)/mypy generator
	$(BIN)/corpus check-season >/dev/null
	$(BIN)/pytest -q $(PYTEST_JOBS)

test-fast: $(BIN)/corpus  ## lint (ruff, mypy), then every test that runs no nginx (pytest -m "not nginx"; docs/testing.md)
	$(BIN)/ruff check generator tests bench
	$(BIN)/mypy generator
	$(BIN)/pytest -q $(PYTEST_JOBS) -m "not nginx"

serve: setup  ## build if needed, then run nginx on 127.0.0.1:$(PORT) (SECRET_FILE=... or a printed dev secret)
	$(BIN)/corpus serve --port $(PORT) $(if $(SECRET_FILE),--secret-file $(SECRET_FILE))

serve-topology: setup  ## build if needed, then a TLS frontal on 127.0.0.1:$(FRONTAL_PORT) over $(REPLICAS) replicas
	$(BIN)/corpus serve --replicas $(REPLICAS) --port $(FRONTAL_PORT) $(if $(SECRET_FILE),--secret-file \
	  $(SECRET_FILE)) $(if $(STATE_FILE),--state-file $(STATE_FILE))

bench-build: $(BIN)/corpus  ## compiler benchmark: 10,000 synthetic entities vs the PyYAML parse ceiling
	$(BIN)/python bench/bench_build.py

bench-nginx: setup  ## vhost benchmark: wrk on loopback, vhost vs the same nginx with no check
	$(BIN)/python bench/bench_nginx.py

bench-frontal: setup  ## TLS, one request per connection: frontal + replica vs a bare nginx, ECDSA vs RSA
	$(BIN)/python bench/bench_frontal.py

bench-release: setup  ## release artifacts: pack time and size, install and rollback under load (requests, failures)
	$(BIN)/python bench/bench_release.py

rehearsal: setup  ## a whole season of both tracks, freeze to verified publications, on a stand-in of Trust Layer's API
	$(BIN)/python bench/season_publication.py $(if $(KEEP),--keep $(KEEP))

clean:
	rm -rf $(VENV) run .pytest_cache .ruff_cache .mypy_cache
