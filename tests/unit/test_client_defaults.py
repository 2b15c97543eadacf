"""Both SDKs (and `vg`), with no base URL given or in the environment, talk to where the api listens by
default and `make dev` serves it: a newcomer's first call must not be refused for a port mismatch."""

from __future__ import annotations

import re
from pathlib import Path

from videogen_api.settings import ApiSettings
from videogen_client._client import DEFAULT_BASE_URL

ROOT = Path(__file__).resolve().parents[2]


def test_the_sdks_default_base_url_is_the_apis_default_address() -> None:
    port = ApiSettings.model_fields["api_port"].default
    expected = f"http://127.0.0.1:{port}/v1"
    assert expected == DEFAULT_BASE_URL
    typescript = (ROOT / "clients/typescript/src/client.ts").read_text()
    [declared] = re.findall(r'export const DEFAULT_BASE_URL = "([^"]+)"', typescript)
    assert declared == expected
