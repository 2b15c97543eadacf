"""`videogen dev`: the whole stack on 127.0.0.1 in the foreground — broker, store, migrations, a dev API key,
and the three services. A process that dies is restarted (as Kubernetes would) and the restart is logged.
Ctrl-C or SIGTERM stops every process it started."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from videogen.dev_engines import ENGINES_FILE, write_engines_file
from videogen.engines import (
    EngineSpec,
    kafka_bootstrap,
    mongo_url,
    port_in_use,
    secantus_spec,
    spawn,
    stop,
    tansu_spec,
    wait_for_http,
    wait_for_port,
)
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_common.domain import Provider
from videogen_common.settings import ENV_PREFIX, CommonSettings, load_settings
from videogen_common.store import connect
from videogen_orchestrator.settings import CREDENTIALS

log = logging.getLogger("videogen.dev")

DEV_ACCOUNT = "dev"
SERVICE_MODULES = {
    "api": "videogen_api.main",
    "orchestrator": "videogen_orchestrator.main",
    "notifier": "videogen_notifier.main",
}
RESTART_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# A child that ran this long before dying is restarted with the shortest backoff again.
STABLE_AFTER_S = 60.0


def enabled_providers(env: Mapping[str, str]) -> str:
    """The mock and every real provider whose credential variable is set (and not blank) in ``env``."""
    names = [Provider.MOCK.value]
    for provider, setting in CREDENTIALS.items():
        if env.get(f"{ENV_PREFIX}{setting.upper()}", "").strip():
            names.append(provider.value)
    return ",".join(names)


@dataclass
class DevConfig:
    data_dir: Path
    api_port: int = 8080
    # The workers' side ports (/healthz, /readyz, /metrics).
    orchestrator_port: int = 8081
    notifier_port: int = 8082
    kafka_port: int = 19092
    mongo_port: int = 27117
    dev_key: str | None = None
    # VIDEOGEN_PROVIDERS for the services: mock, plus each real provider whose credentials are set.
    providers: str = "mock"

    @classmethod
    def from_env(cls) -> DevConfig:
        env = os.environ
        return cls(
            providers=env.get("VIDEOGEN_PROVIDERS") or enabled_providers(env),
            data_dir=Path(env.get("VIDEOGEN_DATA_DIR", "var")).resolve(),
            api_port=int(env.get("VIDEOGEN_API_PORT", "8080")),
            orchestrator_port=int(env.get("VIDEOGEN_ORCHESTRATOR_PORT", "8081")),
            notifier_port=int(env.get("VIDEOGEN_NOTIFIER_PORT", "8082")),
            kafka_port=int(env.get("VIDEOGEN_DEV_KAFKA_PORT", "19092")),
            mongo_port=int(env.get("VIDEOGEN_DEV_MONGO_PORT", "27117")),
            dev_key=env.get("VIDEOGEN_DEV_API_KEY") or None,
        )

    def service_env(self) -> dict[str, str]:
        return {
            "VIDEOGEN_KAFKA_BOOTSTRAP": kafka_bootstrap(self.kafka_port),
            "VIDEOGEN_MONGO_URL": mongo_url(self.mongo_port),
            "VIDEOGEN_DATA_DIR": str(self.data_dir),
            "VIDEOGEN_API_PORT": str(self.api_port),
            "VIDEOGEN_ORCHESTRATOR_PORT": str(self.orchestrator_port),
            "VIDEOGEN_NOTIFIER_PORT": str(self.notifier_port),
            "VIDEOGEN_PUBLIC_BASE_URL": f"http://127.0.0.1:{self.api_port}",
            "VIDEOGEN_PROVIDERS": self.providers,
            # The dev stack may deliver webhooks to plain-http and loopback receivers.
            "VIDEOGEN_WEBHOOK_ALLOW_HTTP": "true",
            # The api refuses to register, and the notifier to deliver to, private and loopback destinations
            # unless opened here.
            "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8,::1/128",
            # No load balancer to drain from: stop at once.
            "VIDEOGEN_SHUTDOWN_DRAIN_SECONDS": "0",
        }


@dataclass
class Child:
    name: str
    spec: EngineSpec
    log_file: Path | None
    proc: asyncio.subprocess.Process | None = None
    restarts: int = 0
    env: dict[str, str] = field(default_factory=dict)
    started_at: float = 0.0
    failures_in_a_row: int = 0


class DevStack:
    def __init__(self, config: DevConfig) -> None:
        self.config = config
        self.children: dict[str, Child] = {}
        self._stopping = asyncio.Event()

    def settings(self) -> CommonSettings:
        """What the migration and the dev key need: the engines this stack started, its data folder."""
        cfg = self.config
        return load_settings(
            CommonSettings,
            kafka_bootstrap=kafka_bootstrap(cfg.kafka_port),
            mongo_url=mongo_url(cfg.mongo_port),
            data_dir=cfg.data_dir,
        )

    async def run(self) -> None:
        cfg = self.config
        logs = cfg.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stopping.set)
        ports = (cfg.kafka_port, cfg.mongo_port, cfg.api_port, cfg.orchestrator_port, cfg.notifier_port)
        busy = [p for p in ports if p and port_in_use(p)]
        if busy:
            raise SystemExit(
                f"videogen dev: port(s) {', '.join(map(str, busy))} on 127.0.0.1 are already in use "
                "(another `make dev`?). Stop it, or set VIDEOGEN_API_PORT, VIDEOGEN_DEV_KAFKA_PORT, "
                "VIDEOGEN_DEV_MONGO_PORT, VIDEOGEN_ORCHESTRATOR_PORT, VIDEOGEN_NOTIFIER_PORT."
            )
        try:
            await self._start(Child("broker", tansu_spec(cfg.kafka_port), logs / "broker.log"))
            await self._start(
                Child("store", secantus_spec(cfg.mongo_port, cfg.data_dir / "store"), logs / "store.log")
            )
            await migrate(self.settings())
            await asyncio.to_thread(write_engines_file, cfg.data_dir, self.settings())
            key = await self._dev_key()
            for name, module in SERVICE_MODULES.items():
                port = cfg.api_port if name == "api" else 0
                spec = EngineSpec(name, [sys.executable, "-m", module], port)
                await self._start(Child(name, spec, None, env=cfg.service_env()))
            await self._wait_api()
            self._banner(key)
            await self._supervise()
        finally:
            await self._shutdown()

    async def _start(self, child: Child) -> None:
        child.proc = await spawn(child.spec, log=child.log_file, env=child.env, cwd=self.config.data_dir)
        child.started_at = asyncio.get_running_loop().time()
        self.children[child.name] = child
        if child.spec.port and child.name in ("broker", "store"):
            await wait_for_port(child.spec.port, proc=child.proc)

    async def _dev_key(self) -> str:
        key_file = self.config.data_dir / "dev-api-key"
        fixed = self.config.dev_key or (key_file.read_text().strip() if key_file.exists() else None)
        settings = self.settings()
        client, store = connect(
            settings.mongo_url,
            settings.mongo_db,
            app_name="videogen-dev",
            durability=settings.mongo_write_concern,
        )
        try:
            key = await create_key(store, DEV_ACCOUNT, key=fixed)
        finally:
            await client.close()
        key_file.write_text(key + "\n")
        key_file.chmod(0o600)
        return key

    async def _wait_api(self) -> None:
        api = self.children["api"].proc
        await wait_for_http(
            f"http://127.0.0.1:{self.config.api_port}/healthz",
            timeout=60.0,
            exited=lambda: api.returncode if api is not None else None,
        )

    def _banner(self, key: str) -> None:
        origin = f"http://127.0.0.1:{self.config.api_port}"
        base = f"{origin}/v1"
        print(  # noqa: T201 — this is the command's output
            f"\nvideogen is running.\n  API base URL: {base}\n  API key:      {key}\n"
            f"  console:      {origin}/console (sign in with the key)\n"
            f"  data:         {self.config.data_dir}\n"
            f"  try: curl -s -X POST {base}/generate -H 'Authorization: Bearer {key}' "
            '-H \'Content-Type: application/json\' -d \'{"prompt":"a red fox","provider":"mock",'
            '"duration":3}\'\n'
            f"  SDK:          export VIDEOGEN_BASE_URL={base} VIDEOGEN_API_KEY={key}\n"
            "Ctrl-C stops everything.\n",
            flush=True,
        )

    async def _supervise(self) -> None:
        while not self._stopping.is_set():
            waits = {asyncio.ensure_future(c.proc.wait()): c for c in self.children.values() if c.proc}
            stop_wait = asyncio.ensure_future(self._stopping.wait())
            done, pending = await asyncio.wait([*waits, stop_wait], return_when=asyncio.FIRST_COMPLETED)
            for fut in pending:
                fut.cancel()
            if self._stopping.is_set():
                return
            for fut in done:
                child = waits.get(fut)
                if child is None:
                    continue
                if not await self._restart(child, fut.result()):
                    return
                if child.name == "broker":
                    # The embedded broker keeps topics in memory: recreate them before anyone needs them.
                    await migrate(self.settings())

    async def _restart(self, child: Child, code: int) -> bool:
        """Restart a child that died, with backoff; False if the stack is stopping instead."""
        ran_for = asyncio.get_running_loop().time() - child.started_at
        child.failures_in_a_row = 1 if ran_for > STABLE_AFTER_S else child.failures_in_a_row + 1
        delay = RESTART_BACKOFF_S[min(child.failures_in_a_row, len(RESTART_BACKOFF_S)) - 1]
        child.restarts += 1
        log.warning(
            "%s exited with code %s after %.1fs; restarting it in %.0fs (restart #%d)",
            child.name,
            code,
            ran_for,
            delay,
            child.restarts,
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), delay)
        if self._stopping.is_set():
            return False
        await self._start(child)
        return True

    async def _shutdown(self) -> None:
        # Services first (they drain and hand back leases), then the engines they talk to.
        order = ["api", "orchestrator", "notifier", "broker", "store"]
        services = [self.children[n].proc for n in order[:3] if n in self.children]
        await asyncio.gather(*(stop(p, 15) for p in services if p is not None))
        for name in order[3:]:
            child = self.children.get(name)
            if child and child.proc:
                await stop(child.proc, 10)
        (self.config.data_dir / ENGINES_FILE).unlink(missing_ok=True)
        print("videogen stopped; every process it started has exited.", flush=True)  # noqa: T201


def run_dev() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s videogen-dev %(levelname)s %(message)s")
    asyncio.run(DevStack(DevConfig.from_env()).run())
