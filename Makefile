# Two commands do all the set-up on a fresh machine (Python >= 3.11, Node >= 20 with npm):
#   make serve   set up, then serve the site at http://127.0.0.1:8000 with live reload
#   make test    set up with the test dependencies, then run the whole suite
#   make test-fast   the CPython tests only (no browser, no Pyodide, no extra build): under a minute
# Stamps make the set-up incremental: it reruns when pyproject.toml or package-lock.json change.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Material for MkDocs prints a banner about MkDocs 2.0 on every build; the pin (mkdocs<2) answers it.
export NO_MKDOCS_2_WARNING := true

.PHONY: serve build test test-fast bench setup setup-test browser clean

$(VENV)/.docs-stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

$(VENV)/.test-stamp: pyproject.toml $(VENV)/.docs-stamp
	$(BIN)/python -m pip install --quiet -e '.[docs,test]'
	touch $@

node_modules/.npm-stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

setup: $(VENV)/.docs-stamp node_modules/.npm-stamp

setup-test: setup $(VENV)/.test-stamp browser

# The browser tests drive Debian's Chromium (Playwright cannot download browsers here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "make: chromium is missing; install Debian's chromium package (as root: apt-get install chromium)" >&2; exit 1; \
	  fi; }

# mkdocs.yml is strict; while editing, a warning is printed and the page still reloads.
serve: setup
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload --no-strict

build: setup
	$(BIN)/mkdocs build

test: setup-test
	$(BIN)/python -m pytest --durations=15

test-fast: $(VENV)/.test-stamp node_modules/.npm-stamp
	$(BIN)/python -m pytest -m "not browser and not pyodide and not rebuild"

bench: setup-test
	$(BIN)/python -m tests.bench

clean:
	rm -rf site .venv node_modules .pytest_cache .hypothesis .cache
