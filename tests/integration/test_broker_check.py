"""The workers' readiness check of the broker (``videogen_common.probes.BrokerCheck``): against the real
broker it is ready once the service's topics exist; against a broker slower to answer than one probe's
time limit (a listener on 127.0.0.1 that accepts and never answers), each probe fails within its limit
while the one connect goes on, rather than each probe beginning a connection and dropping it (which
never reaches a slow broker)."""

from __future__ import annotations

import asyncio

from videogen_common.probes import BrokerCheck, run_checks
from videogen_common.settings import CommonSettings
from videogen_common.topics import Topics, ensure_topics


async def test_ready_once_the_services_topics_exist(common_settings: CommonSettings) -> None:
    topics = Topics(common_settings.topic_prefix)
    check = BrokerCheck(common_settings.kafka_bootstrap, [topics.requested])
    try:
        answer = await run_checks({"broker": check}, timeout=30)
        assert answer == {"broker": f"error: topic {topics.requested} does not exist (run the migration)"}
        await ensure_topics(common_settings.kafka_bootstrap, topics, common_settings.topic_partitions)
        assert await run_checks({"broker": check}, timeout=30) == {"broker": "ok"}
    finally:
        await check.close()


async def test_a_connect_slower_than_a_probe_goes_on_across_probes() -> None:
    accepted = 0

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        await reader.read()  # until the client hangs up
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    check = BrokerCheck(f"127.0.0.1:{port}", ["t.generation.requested"])
    try:
        for _ in range(3):
            assert await run_checks({"broker": check}, timeout=0.3) == {
                "broker": "error: no answer within 0.3s"
            }
        assert accepted == 1
    finally:
        await check.close()
        server.close()
        await server.wait_closed()
