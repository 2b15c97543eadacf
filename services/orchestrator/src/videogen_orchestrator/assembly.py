"""How the orchestrator is put together: the one place its parts are built, each handed what it uses at
construction (``assemble``). The runtime (``runtime.py``), the tests' wiring and the benches all build the
orchestrator here, so none of them builds it differently.

The parts are peers, built in this order; none builds another, sets another's callbacks afterwards, or
reaches through one to a third:

- ``Breakers`` (``health``): each provider key's breaker and recent outcomes.
- ``Rerouting``: moves a generation to a later candidate of its route; reads the breakers.
- ``Admission``: the slots a generation needs (its account's and one of its provider's key's) and the lines
  where it waits for them.
- ``MediaCopy``: copies a finished video into our storage.
- ``TaskWatch``: when an actor reads its provider's task next (the polling cadence, asking admission
  whether work waits for a provider's capacity, or a provider's callback); the runtime's ``CallbackFeed``
  hands it the callbacks' wake-ups.
- ``GenerationActor``: one generation's story at its provider; tells the breakers what the provider's
  answers say (``on_health``) and waits between reads of its task through the watch.
- ``Runner``: claims generations and runs their actors; asks admission for slots, rerouting for moves, the
  breakers to let go of a probe.
- ``Reconciler``: repairs what a crash left behind through the runner (resume, dispatch) and admission
  (slots of finished generations, waiting generations past their deadline), ending those the one way
  (``videogen_common.endings``) at the deployment's prices."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from videogen_common.clock import Clock
from videogen_common.media import MediaStore
from videogen_common.store import Store
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.admission import Admission
from videogen_orchestrator.health import Breakers
from videogen_orchestrator.media_copy import MediaCopy
from videogen_orchestrator.metrics import OrchestratorMetrics
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.rate import RateLimiter
from videogen_orchestrator.reconciler import Reconciler
from videogen_orchestrator.rerouting import Rerouting
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink
from videogen_orchestrator.task_watch import TaskWatch


@dataclass(frozen=True, slots=True)
class Orchestrator:
    """One orchestrator instance's parts, as ``assemble`` built them."""

    health: Breakers
    rerouting: Rerouting
    admission: Admission
    actor: GenerationActor
    runner: Runner
    reconciler: Reconciler
    watch: TaskWatch


def breakers_for(
    settings: OrchestratorSettings, store: Store, clock: Clock, metrics: OrchestratorMetrics | None = None
) -> Breakers:
    """Each provider key's breaker, as the settings make it."""
    return Breakers(
        store,
        clock,
        failures=settings.provider_breaker_failures,
        cooldown_seconds=settings.provider_breaker_cooldown_seconds,
        probe_seconds=settings.provider_breaker_probe_seconds,
        window=settings.provider_health_window,
        flush_seconds=settings.provider_health_flush_seconds,
        on_transition=metrics.observe_breaker if metrics is not None else None,
    )


def admission_for(
    settings: OrchestratorSettings, store: Store, clock: Clock, metrics: OrchestratorMetrics | None = None
) -> Admission:
    """Admission to every provider this deployment enables, with each key's configured limit. Its pools are
    made at its first use (the reconciler's first pass at the latest): start-up does not wait for the
    store."""
    return Admission(
        store=store,
        clock=clock,
        account_cap=settings.account_max_in_flight,
        pools=[pool for provider in sorted(settings.providers) for pool in settings.pools(provider)],
        on_waited=metrics.observe_waited if metrics is not None else None,
        on_refused=metrics.observe_refused if metrics is not None else None,
    )


@dataclass(frozen=True, slots=True)
class Resources:
    """What one orchestrator instance runs on, given from outside: its settings, the store and the media
    store, the providers' adapters by key, where its messages go (``sink``), its clock, and the metrics that
    observe it (None: unobserved)."""

    settings: OrchestratorSettings
    store: Store
    media: MediaStore
    providers: Mapping[str, ProviderAdapter]
    sink: EventSink
    clock: Clock
    metrics: OrchestratorMetrics | None = None


def actor_for(
    resources: Resources,
    *,
    health: Breakers | None = None,
    contended: Callable[[str], bool] | None = None,
    watch: TaskWatch | None = None,
) -> GenerationActor:
    """The actor, telling ``health`` (if given) what the providers' answers say and asking ``contended`` (if
    given) whether work waits for a provider's capacity, waiting through ``watch`` (its own if not given);
    alone (none of them), it drives one generation to its end, as a test does."""
    settings, store, media, clock, metrics = (
        resources.settings,
        resources.store,
        resources.media,
        resources.clock,
        resources.metrics,
    )
    return GenerationActor(
        settings=settings,
        store=store,
        media=media,
        media_copy=MediaCopy(settings=settings, store=store, media=media, clock=clock),
        providers=resources.providers,
        sink=resources.sink,
        clock=clock,
        on_finished=metrics.observe_finished if metrics is not None else None,
        on_health=health.record if health is not None else None,
        contended=contended,
        watch=watch,
    )


def assemble(resources: Resources, *, limiters: Iterable[RateLimiter] = ()) -> Orchestrator:
    """The parts of the orchestrator instance that runs on ``resources``; the reconciler shares the
    providers' rate caps among the instances alive (``limiters``)."""
    settings, store, sink, clock, metrics = (
        resources.settings,
        resources.store,
        resources.sink,
        resources.clock,
        resources.metrics,
    )
    health = breakers_for(settings, store, clock, metrics)
    rerouting = Rerouting(store, clock, health, on_move=metrics.observe_move if metrics is not None else None)
    admission = admission_for(settings, store, clock, metrics)
    watch = TaskWatch(settings, clock, admission.contended)
    actor = actor_for(resources, health=health, watch=watch)
    runner = Runner(settings, store, actor, admission, rerouting, health=health, clock=clock, sink=sink)
    reconciler = Reconciler(settings, store, runner, admission, sink, clock=clock, limiters=limiters)
    return Orchestrator(health, rerouting, admission, actor, runner, reconciler, watch)
