"""One VIDEOGEN_* variable means one thing. Every service reads the whole deployment's ConfigMap, so a setting
two services define on their own (outside CommonSettings) is set for both at once by whoever tunes one: the
provider keys' breaker once shared its variables with the webhook endpoints' this way."""

from __future__ import annotations

import itertools

from pydantic_settings import BaseSettings

from videogen_api.settings import ApiSettings
from videogen_common.settings import CommonSettings
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

# Each process's own, alike in meaning wherever it is set (how long that process takes to stop).
PER_PROCESS = {"shutdown_timeout_seconds"}


def test_no_two_services_define_the_same_setting_apart_from_the_common_ones() -> None:
    services: dict[str, type[BaseSettings]] = {
        "api": ApiSettings,
        "orchestrator": OrchestratorSettings,
        "notifier": NotifierSettings,
    }
    common = set(CommonSettings.model_fields)
    own = {name: set(cls.model_fields) - common - PER_PROCESS for name, cls in services.items()}
    shared = {(a, b): sorted(own[a] & own[b]) for a, b in itertools.combinations(own, 2) if own[a] & own[b]}
    assert shared == {}
