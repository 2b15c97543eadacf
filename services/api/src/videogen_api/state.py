"""Typed application state: what handlers may reach through ``request.app``."""

from __future__ import annotations

from aiohttp import web

from videogen_api.auth import KeyCache
from videogen_api.drain import Drain
from videogen_api.provider_states import ProviderStates
from videogen_api.publisher import EventPublisher
from videogen_api.ratelimit import RateLimiter
from videogen_api.settings import ApiSettings
from videogen_api.spend import AccountLimits, Reservations
from videogen_api.status_feed import StatusFeed
from videogen_common.catalogue import Catalogue
from videogen_common.clock import Clock
from videogen_common.media import MediaStore
from videogen_common.pricing import PriceTable
from videogen_common.repositories.batched_inserts import InsertBatcher
from videogen_common.repositories.generation_reads import GenerationReads
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

SETTINGS = web.AppKey("settings", ApiSettings)
CLOCK = web.AppKey("clock", Clock)
STORE = web.AppKey("store", Store)
# The writes on generations (creation's grouped inserts, a cancel), and what the api reads of them.
GENERATIONS = web.AppKey("generations", GenerationRepository)
GENERATION_READS = web.AppKey("generation_reads", GenerationReads)
PUBLISHER = web.AppKey("publisher", EventPublisher)
MEDIA = web.AppKey("media", MediaStore)
KEYS = web.AppKey("keys", KeyCache)
# Each account's budgets, cached (POST /v1/generate reserves against them).
ACCOUNT_LIMITS = web.AppKey("account_limits", AccountLimits)
# Creations' reservations on their budgets, grouped.
RESERVATIONS = web.AppKey("reservations", Reservations)
# New generations' inserts, grouped (POST /v1/generate).
INSERTS = web.AppKey("inserts", InsertBatcher)
DRAIN = web.AppKey("drain", Drain)
# The status events this process reads, for requests that wait (Prefer: wait).
FEED = web.AppKey("feed", StatusFeed)
# Event streams open in this process, by account (GET /v1/generations/{id}/events).
EVENT_STREAMS = web.AppKey("event_streams", dict[str, int])
# The providers' keys and health as routing reads them (cached), and their prices.
PROVIDER_STATES = web.AppKey("provider_states", ProviderStates)
PRICES = web.AppKey("prices", PriceTable)
# The models each provider serves (videogen_common.catalogue), as the deployment configures them.
CATALOGUE = web.AppKey("catalogue", Catalogue)
# Absent when rate limiting is disabled.
RATE_LIMITER = web.AppKey("rate_limiter", RateLimiter)
