# Two entry points, both used by README.md: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1
STAMP := $(VENV)/.installed

.PHONY: install demo test lint docs browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Index the bundled example store, search it twice, remember a new memory and find it again
# (in a scratch copy, so examples/ stays as committed), build the documentation site.
demo: install
	$(BIN)/memsift --store examples index
	$(BIN)/memsift --store examples status
	$(BIN)/memsift --store examples search "how do we rotate the staging database credentials" --limit 3
	$(BIN)/memsift --store examples search "what did Priya say about flaky tests" --limit 3
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && cp -R examples/. "$$scratch" && \
	echo "+ memsift remember (into a scratch copy of examples/), then search for it" && \
	echo "Staging deploys pause during the quarterly load-test week." | \
	  $(BIN)/memsift --store "$$scratch" remember --title "Deploy pause in load-test week" \
	  --kind procedural --tag deploy && \
	$(BIN)/memsift --store "$$scratch" search "when do staging deploys pause" --limit 3
	$(BIN)/mkdocs build --strict

lint: install
	$(BIN)/ruff check src tests scripts benchmarks

docs: install
	$(BIN)/mkdocs build --strict

# The browser the docs' browser test opens (Debian's chromium), installed when missing and
# possible; without it that test skips and says why.
browser:
	@bash scripts/ensure_browser.sh

# The whole suite: lint, tests (including real strict site builds and the pages opened in a
# browser), the docs site itself.
test: lint browser
	$(BIN)/pytest
	$(BIN)/mkdocs build --strict

clean:
	rm -rf site examples/.memsift
