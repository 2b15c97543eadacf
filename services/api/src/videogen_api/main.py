"""Entry point: ``videogen-api``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import resource
import sys

from videogen_api.app import create_app
from videogen_api.server import serve
from videogen_api.settings import ApiSettings
from videogen_common.logs import configure_logging
from videogen_common.settings import SettingsError, load_settings
from videogen_common.tracing import configure_tracing

# Allocations between two collections of the youngest generation (CPython's default: 700). Every request
# allocates hundreds of short-lived objects: at the default a busy api collects many times a second, and
# promotes what requests in flight still hold to the older generations, whose collections walk far more.
GC_YOUNG_THRESHOLD = 10_000


def main() -> None:
    try:
        settings = load_settings(ApiSettings)
    except SettingsError as exc:
        sys.exit(f"videogen-api: {exc}")
    configure_logging("api", settings.log_level, settings.log_format)
    configure_tracing("api", http_server=True)
    app = create_app(settings)
    open_files_up_to_hard_limit()
    collect_young_less_often()
    asyncio.run(serve(app))


def open_files_up_to_hard_limit() -> None:
    """Raise the soft limit on open files to the hard one (often 1,024 soft, far more hard): every event
    stream holds a socket, and one process is meant to hold 10,000 of them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard not in {soft, resource.RLIM_INFINITY}:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: the limit stays as it was
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def collect_young_less_often() -> None:
    """What start-up made (modules, models, the OpenAPI document: ~100,000 objects that live as long as the
    process) is moved out of the collector's sight (``gc.freeze``), so the older generations' collections no
    longer walk it; and the youngest generation is collected every ``GC_YOUNG_THRESHOLD`` allocations."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


if __name__ == "__main__":
    main()
