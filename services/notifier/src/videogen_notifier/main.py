"""Entry point: ``videogen-notifier``."""

from __future__ import annotations

import sys

from videogen_common.logs import configure_logging
from videogen_common.settings import SettingsError, load_settings
from videogen_common.tracing import configure_tracing
from videogen_common.workers import BoundedWorker
from videogen_notifier.app import create_notifier
from videogen_notifier.settings import NotifierSettings


def main() -> None:
    try:
        settings = load_settings(NotifierSettings)
    except SettingsError as exc:
        sys.exit(f"videogen-notifier: {exc}")
    configure_logging("notifier", settings.log_level, settings.log_format)
    configure_tracing("notifier")
    app, runtime = create_notifier(settings)
    worker = BoundedWorker(
        app,
        runtime,
        stop_within=settings.shutdown_timeout_seconds,
        quiet=True,
        override_logging=False,
        loglevel=settings.log_level,
        redirect_stdouts=False,
    )
    worker.execute_from_commandline()


if __name__ == "__main__":
    main()
