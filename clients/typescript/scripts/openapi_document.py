"""Print the OpenAPI document the api serves with its default settings, as JSON: what the TypeScript SDK's
types are generated from (``make ts-types``), without starting a server. ``VIDEOGEN_*`` variables of the
caller's environment are ignored, so every machine generates the same types."""

from __future__ import annotations

import json
import os
import sys

from videogen_api.openapi import build_document
from videogen_api.settings import ApiSettings
from videogen_common.settings import ENV_PREFIX, load_settings


def main() -> None:
    for name in [name for name in os.environ if name.startswith(ENV_PREFIX)]:
        del os.environ[name]
    document = build_document(load_settings(ApiSettings))
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
