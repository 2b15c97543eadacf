"""Entry point: ``videogen-orchestrator``."""

from __future__ import annotations

import sys

from videogen_common.logs import configure_logging
from videogen_common.settings import SettingsError, load_settings
from videogen_common.tracing import configure_tracing
from videogen_common.workers import BoundedWorker
from videogen_orchestrator.app import create_orchestrator
from videogen_orchestrator.settings import OrchestratorSettings


def main() -> None:
    try:
        settings = load_settings(OrchestratorSettings)
    except SettingsError as exc:
        sys.exit(f"videogen-orchestrator: {exc}")
    configure_logging("orchestrator", settings.log_level, settings.log_format)
    configure_tracing("orchestrator")
    app, runtime = create_orchestrator(settings)
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
