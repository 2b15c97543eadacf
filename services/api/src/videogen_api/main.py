"""Entry point: ``videogen-api``."""

from __future__ import annotations

import asyncio
import sys

from videogen_api.app import create_app
from videogen_api.server import serve
from videogen_api.settings import ApiSettings
from videogen_common.logs import configure_logging
from videogen_common.settings import SettingsError, load_settings
from videogen_common.tracing import configure_tracing


def main() -> None:
    try:
        settings = load_settings(ApiSettings)
    except SettingsError as exc:
        sys.exit(f"videogen-api: {exc}")
    configure_logging("api", settings.log_level, settings.log_format)
    configure_tracing("api", http_server=True)
    asyncio.run(serve(create_app(settings)))


if __name__ == "__main__":
    main()
