# videogen — the two commands: `make dev` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.8
LOCAL_PACKAGES := -e libs/common -e clients/python -e services/api -e services/orchestrator -e services/notifier -e .
STAMP  := $(VENV)/.installed

.PHONY: dev test lint unit install lock clean promtool chromium

dev: $(STAMP)
	$(BIN)/videogen dev

test: lint
	$(BIN)/pytest

unit: $(STAMP)
	$(BIN)/pytest tests/unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy libs/common/src clients/python/src services/api/src services/orchestrator/src services/notifier/src src tests bench
	$(BIN)/lint-imports

install: $(STAMP)

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

# Re-pin after editing requirements/*.in. The output records no registry address (see docs/development.md).
lock: $(BIN)/uv
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/runtime.in -o requirements/runtime.txt
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/dev.in -o requirements/dev.txt


clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
