# videogen — the two commands: `make dev` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.8
LOCAL_PACKAGES := -e libs/common -e clients/python -e services/api -e services/orchestrator -e services/notifier -e .
STAMP  := $(VENV)/.installed
TS       := clients/typescript
TS_STAMP := $(TS)/node_modules/.installed

.PHONY: dev test lint unit install lock clean promtool chromium nodejs ts-types

dev: $(STAMP)
	$(BIN)/videogen dev

test: lint
	$(BIN)/pytest

unit: $(STAMP)
	$(BIN)/pytest tests/unit

lint: $(STAMP) $(TS_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy libs/common/src clients/python/src services/api/src services/orchestrator/src services/notifier/src src tests bench
	$(BIN)/lint-imports
	cd $(TS) && npm run --silent lint

install: $(STAMP) $(TS_STAMP)

$(BIN)/uv:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(STAMP): $(BIN)/uv requirements/dev.txt pyproject.toml libs/common/pyproject.toml clients/python/pyproject.toml services/*/pyproject.toml
	$(BIN)/uv pip sync --python $(BIN)/python requirements/dev.txt
	$(BIN)/uv pip install --python $(BIN)/python --no-deps --no-build-isolation $(LOCAL_PACKAGES)
	@command -v promtool >/dev/null || $(MAKE) --no-print-directory promtool
	@test -x /usr/bin/chromium || $(MAKE) --no-print-directory chromium
	touch $(STAMP)

# Prometheus and its promtool, which the alert tests run: Debian's prometheus package (installed, not started).
promtool:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; \
	else \
		echo "promtool is missing: install Debian's prometheus package as root (the alert tests need it)" >&2; \
	fi

# Chromium, which the console's browser tests drive through Playwright: Debian's chromium package (Playwright
# downloads no browser of its own).
chromium:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	else \
		echo "chromium is missing: install Debian's chromium package as root (the console's browser tests need it)" >&2; \
	fi

# The TypeScript SDK (clients/typescript): Node and npm (Debian's packages, when missing), then its dev
# dependencies (TypeScript, openapi-typescript) exactly as its package-lock.json pins them.
$(TS_STAMP): $(TS)/package.json $(TS)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || $(MAKE) --no-print-directory nodejs
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

nodejs:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; \
	else \
		echo "node and npm are missing: install Debian's nodejs and npm packages as root (the TypeScript SDK's tests need them)" >&2; \
	fi
	@node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || \
		echo "the TypeScript SDK's tests need Node 20 or newer; this one is $$(node --version)" >&2

# Regenerate the TypeScript SDK's types from the API's OpenAPI document (after the API changes; commit them).
ts-types: $(STAMP) $(TS_STAMP)
	$(BIN)/python $(TS)/scripts/openapi_document.py | node $(TS)/scripts/generate-types.mjs -

# Re-pin after editing requirements/*.in. The output records no registry address (see docs/development.md).
lock: $(BIN)/uv
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/runtime.in -o requirements/runtime.txt
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/dev.in -o requirements/dev.txt


clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
