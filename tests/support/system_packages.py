"""Debian packages some tests drive (chromium for the console, prometheus and its promtool for the alerts),
which ``make install`` installs only when run as root. Without one, those tests skip, naming what is missing
and how to get it; under CI (``CI`` set) they fail instead, since CI runs as root and must run them all."""

from __future__ import annotations

import os

import pytest


def require(found: object, package: str, what: str) -> None:
    """Skip (fail under CI) the calling test unless ``found``: the ``package`` that ``what`` needs."""
    if found:
        return
    message = (
        f"{what} needs Debian's {package} package, missing here: `make install` installs it when run as root "
        f"(or: apt-get install {package})"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
