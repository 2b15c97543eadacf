"""What each adapter declares it can do beyond submit and poll (``can_cancel``, ``pays_per_submit``), and the
defaults an adapter that declares nothing has."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from videogen_orchestrator.metrics import MeasuredProvider, OrchestratorMetrics
from videogen_orchestrator.providers.base import AdapterDefaults, Job
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.remote import RemoteAdapter
from videogen_orchestrator.providers.runway import RunwayAdapter

JOB = Job(generation_id="gen_1", prompt="a lighthouse in a storm", duration=5)


@pytest.mark.parametrize("adapter", [RunwayAdapter, LumaAdapter, PikaAdapter])
def test_the_real_adapters_can_cancel_and_are_paid_per_submit(adapter: type[RemoteAdapter]) -> None:
    assert adapter.can_cancel is True
    assert adapter.pays_per_submit is True


def test_the_mock_can_cancel_and_its_submit_is_free() -> None:
    assert MockProvider.can_cancel is True
    assert MockProvider.pays_per_submit is False


async def test_an_adapter_that_declares_nothing_has_the_safe_defaults() -> None:
    defaults = AdapterDefaults()
    assert defaults.can_cancel is False
    assert defaults.pays_per_submit is True  # never submitted again after an interrupted submit
    assert defaults.plan(JOB) == {}
    await defaults.close()
    with pytest.raises(NotImplementedError):
        await defaults.cancel("task_1")


async def test_a_measured_adapter_passes_its_declarations_and_calls_through() -> None:
    mock = MockProvider()
    measured = MeasuredProvider(mock, OrchestratorMetrics(CollectorRegistry()))
    assert (measured.name, measured.can_cancel, measured.pays_per_submit) == ("mock", True, False)
    assert measured.plan(JOB) == mock.plan(JOB)
    await measured.cancel("mock_gen_1")
    assert mock.canceled == ["mock_gen_1"]
