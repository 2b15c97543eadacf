"""`videogen`: dev stack, migrations, API key admin, an account's media retention, and the services' effective
settings."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from videogen.dev_engines import running_engines
from videogen.keys import create_key, revoke_key
from videogen.migrate import migrate
from videogen.retention import retention_of, set_retention
from videogen_common.settings import CommonSettings, SettingsError, load_settings
from videogen_common.store import ServerSelectionTimeoutError, Store, connect

ENV_MONGO_URL = "VIDEOGEN_MONGO_URL"
ENV_DATA_DIR = "VIDEOGEN_DATA_DIR"
# How long `videogen keys` waits for the store before saying it found none.
STORE_WAIT_MS = 5000


def _settings(**overrides: str) -> CommonSettings:
    try:
        return load_settings(CommonSettings, **overrides)
    except SettingsError as exc:
        sys.exit(f"videogen: {exc}")


def _key_store_settings() -> CommonSettings:
    """The store's settings from the environment; with no VIDEOGEN_MONGO_URL there, those of the
    `videogen dev` running with this data folder (``make dev`` beside it), if one is."""
    if ENV_MONGO_URL in os.environ:
        return _settings()
    return _settings(**running_engines(Path(os.environ.get(ENV_DATA_DIR, "var"))))


async def _admin(args: argparse.Namespace) -> int:
    """``videogen keys`` and ``videogen retention``: a change to one account, in the store."""
    settings = _key_store_settings()
    client, store = connect(
        settings.mongo_url,
        settings.mongo_db,
        app_name="videogen-cli",
        durability=settings.mongo_write_concern,
        server_selection_timeout_ms=STORE_WAIT_MS,
    )
    try:
        if args.command == "retention":
            return await _retention(args, store, settings.media_retention_days)
        if args.keys_command == "create":
            key = await create_key(store, args.account, name=args.name)
            print(key)  # noqa: T201 — shown once, never stored
            return 0
        revoked = await revoke_key(store, args.key)
        print("revoked" if revoked else "no such active key")  # noqa: T201
        return 0 if revoked else 1
    except ServerSelectionTimeoutError:
        print(  # noqa: T201
            f"videogen {args.command}: no store answers at {settings.mongo_url}; set {ENV_MONGO_URL} (and "
            f"VIDEOGEN_MONGO_DB), or run it beside `make dev` from the same folder",
            file=sys.stderr,
        )
        return 1
    finally:
        await client.close()


async def _retention(args: argparse.Namespace, store: Store, longest: int) -> int:
    if args.retention_command == "show":
        days = await retention_of(store, args.account)
        shown = f"{days} days" if days is not None else f"{longest} days (the deployment's)"
        print(shown)  # noqa: T201
        return 0
    days = args.days if args.retention_command == "set" else None
    try:
        shortened = await set_retention(store, args.account, days, longest=longest)
    except ValueError as exc:
        print(f"videogen retention: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    print(f"{args.account}: media kept {days or longest} days; {shortened} generations due sooner")  # noqa: T201
    return 0


def _config(args: argparse.Namespace) -> int:
    from videogen.config import as_env, as_json, effective_settings  # noqa: PLC0415 — imports every service

    try:
        values = effective_settings(args.service)
    except SettingsError as exc:
        print(f"videogen config: {args.service}: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    print(as_json(values) if args.format == "json" else as_env(values))  # noqa: T201
    return 0


async def _migrate() -> int:
    created = await migrate(_settings())
    print(f"migrated; topics created: {', '.join(created) or 'none'}")  # noqa: T201
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="videogen", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("dev", help="run the whole stack on 127.0.0.1 in the foreground")
    sub.add_parser("migrate", help="create Kafka topics and MongoDB indexes")
    config = sub.add_parser(
        "config", help="print a service's effective settings from the environment (secrets masked)"
    )
    config.add_argument("--service", required=True, choices=["api", "orchestrator", "notifier"])
    config.add_argument("--format", choices=["json", "env"], default="json", help="JSON, or KEY=value lines")
    keys = sub.add_parser("keys", help="API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key for an account; prints it once")
    create.add_argument("--account", required=True)
    create.add_argument("--name", help="to tell the key by (GET /v1/api-keys shows it)")
    revoke = keys_sub.add_parser("revoke", help="revoke a key")
    revoke.add_argument("key")
    retention = sub.add_parser(
        "retention", help="an account's media retention, shorter than the deployment's"
    )
    retention_sub = retention.add_subparsers(dest="retention_command", required=True)
    set_days = retention_sub.add_parser(
        "set", help="keep the account's media this many days, its stored media too"
    )
    set_days.add_argument("--account", required=True)
    set_days.add_argument("--days", required=True, type=int)
    for name, text in (
        ("clear", "keep the account's new media as long as the deployment"),
        ("show", "print it"),
    ):
        retention_sub.add_parser(name, help=text).add_argument("--account", required=True)
    args = parser.parse_args(argv)
    if args.command == "dev":
        from videogen.devstack import run_dev  # noqa: PLC0415 — only the dev command needs it

        run_dev()
        return
    if args.command == "migrate":
        sys.exit(asyncio.run(_migrate()))
    if args.command == "config":
        sys.exit(_config(args))
    sys.exit(asyncio.run(_admin(args)))
