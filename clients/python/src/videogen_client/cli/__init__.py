"""vg: the videogen API from a terminal.

Exit codes: 0 done; 1 the generation failed; 2 bad usage or no API key; 3 the API refused the request;
4 the API could not be reached; 5 a wait ran out of time; 130 interrupted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel

from videogen_client._client import Client
from videogen_client.cli import account, batch, output, settings
from videogen_client.cli.listen import listen
from videogen_client.enums import (
    AspectRatio,
    AuditEventType,
    DeliveryStatus,
    EventType,
    Priority,
    Provider,
    Resolution,
    Scope,
    Sort,
    Status,
    known,
)
from videogen_client.errors import (
    APIConnectionError,
    APIStatusError,
    GenerationFailedError,
    WaitTimeoutError,
)
from videogen_client.models import Generation

OK, FAILED, USAGE, REFUSED, UNREACHABLE, TIMED_OUT, INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
GENERATION_COLUMNS = ("id", "status", "provider", "duration", "created_at", "prompt")
WEBHOOK_COLUMNS = ("id", "url", "events", "active", "disabled_reason")
DELIVERY_COLUMNS = ("id", "event_type", "status", "generation_id", "created_at", "failure_reason")
PROVIDER_COLUMNS = (
    "id",
    "enabled",
    "aspect_ratios",
    "resolutions",
    "durations",
    "image",
    "seed",
    "negative",
    "running",
    "waiting",
    "health",
)
MODEL_COLUMNS = (
    "provider",
    "id",
    "default",
    "enabled",
    "durations",
    "aspect_ratios",
    "resolutions",
    "text",
    "image",
    "seed",
    "negative",
    "usd_per_second",
)
USAGE_COLUMNS = ("date", "provider", "status", "generations", "seconds", "video_seconds", "cost")
AUDIT_COLUMNS = ("created_at", "type", "target", "actor", "data")
EVENT_COLUMNS = ("created_at", "id", "type", "subject")
# What ``--events`` subscribes to unless told: the two a generation's end makes.
TERMINAL_EVENTS = ["video.completed", "video.failed"]


def _providers_list(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one provider")
    return names


def _open_choice(values: object, what: str) -> dict[str, Any]:
    """An option taking one of an API's closed lists: the values this ``vg`` knows are shown, and any other is
    passed to the API, which judges it (a newer server may know more: a new provider or event type)."""
    return {"metavar": what.upper().replace(" ", "_"), "help": f"{what}: {', '.join(known(values))}, ..."}


def main(argv: Sequence[str] | None = None) -> NoReturn:
    args = _parser().parse_args(argv)
    try:
        code = args.run(args)
    except KeyboardInterrupt:
        code = INTERRUPTED
    except GenerationFailedError as exc:
        _show(args, exc.generation)
        print(f"vg: {exc}", file=sys.stderr)
        code = FAILED
    except WaitTimeoutError as exc:
        print(f"vg: {exc}", file=sys.stderr)
        code = TIMED_OUT
    except APIStatusError as exc:
        print(f"vg: {exc}", file=sys.stderr)
        for error in getattr(exc, "errors", []):
            print(f"  {error.field}: {error.message}", file=sys.stderr)
        code = REFUSED
    except APIConnectionError as exc:
        print(f"vg: {exc}", file=sys.stderr)
        code = UNREACHABLE
    sys.exit(code)


def _client(args: argparse.Namespace) -> Client:
    found = settings.resolve(args.api_key, args.base_url)
    if not found.api_key:
        print(
            "vg: no API key: pass --api-key, set VIDEOGEN_API_KEY, or run `vg login --api-key KEY`",
            file=sys.stderr,
        )
        sys.exit(USAGE)
    return Client(api_key=found.api_key, base_url=found.base_url)


def _show(args: argparse.Namespace, model: BaseModel) -> None:
    print(output.as_json(model) if args.json else output.fields(model))


# --- commands -------------------------------------------------------------------------------------------


def _login(args: argparse.Namespace) -> int:
    if not args.api_key:
        print("vg login: --api-key KEY is required", file=sys.stderr)
        return USAGE
    base_url = args.base_url or settings.resolve(None, None).base_url
    with Client(api_key=args.api_key, base_url=base_url) as client:
        client.generations.list_page(limit=1)  # the key works here, or this raises
    path = settings.save(args.api_key, base_url)
    print(f"saved to {path} (readable by you only); vg now uses this key for {base_url}")
    return OK


def _generate(args: argparse.Namespace) -> int:
    with _client(args) as client:
        generation = client.generations.create(
            prompt=args.prompt,
            provider=args.provider,
            duration=args.duration,
            model=args.model,
            aspect_ratio=args.aspect_ratio,
            resolution=args.resolution,
            seed=args.seed,
            negative_prompt=args.negative_prompt,
            metadata=dict(args.metadata or []) or None,
            image=args.image,
            priority=args.priority,
            fallback_providers=args.fallback,
            routing={"sort": args.sort} if args.sort else None,
            fallback_on_failure=True if args.fallback_on_failure else None,
            retention_days=args.retention_days,
            idempotency_key=args.idempotency_key,
        )
        if not (args.wait or args.download):
            _show(args, generation)
            return OK
        generation = _wait(client, generation.id, args.timeout, first=generation)
        if args.download:
            _download(client, generation.id, args.download)
        _show(args, generation)
    return OK


def _wait(client: Client, generation_id: str, timeout: float, first: Generation | None = None) -> Generation:
    progress = output.Progress()
    if first is not None:
        progress.generation(first)
    try:
        done = client.generations.wait(generation_id, timeout=timeout, on_progress=progress.generation)
    except GenerationFailedError as exc:
        progress.finish(f"{generation_id}  failed")
        raise exc from None
    progress.finish(f"{generation_id}  completed")
    return done


def _download(client: Client, generation_id: str, path: Path) -> None:
    progress = output.Progress()
    written = client.generations.download(generation_id, path, on_progress=progress.download)
    progress.finish(f"saved {written:,} bytes to {path}")


def _generations(args: argparse.Namespace) -> int:
    with _client(args) as client:
        command = args.generations_command
        if command == "list":
            found = client.generations.list(
                status=args.status or None, provider=args.provider, metadata=dict(args.metadata or []) or None
            )
            rows = [g for _, g in zip(range(args.limit), found, strict=False)]
            print(output.as_json(rows) if args.json else output.table(rows, GENERATION_COLUMNS))
        elif command == "get":
            _show(args, client.generations.get(args.id))
        elif command == "wait":
            _show(args, _wait(client, args.id, args.timeout))
        elif command == "cancel":
            _show(args, client.generations.cancel(args.id))
        elif command == "delete":
            client.generations.delete(args.id)
            print(output.as_json({"deleted": args.id}) if args.json else f"deleted {args.id}")
        else:
            _download(client, args.id, args.path)
    return OK


def _webhooks(args: argparse.Namespace) -> int:
    with _client(args) as client:
        command = args.webhooks_command
        if command == "create":
            _show(args, client.webhooks.create(url=args.url, events=args.events))
        elif command == "list":
            hooks = client.webhooks.list()
            print(output.as_json(hooks) if args.json else output.table(hooks, WEBHOOK_COLUMNS))
        elif command == "get":
            _show(args, client.webhooks.get(args.id))
        elif command == "delete":
            client.webhooks.delete(args.id)
            print(output.as_json({"deleted": args.id}) if args.json else f"deleted {args.id}")
        elif command == "rotate":
            _show(args, client.webhooks.rotate_secret(args.id))
        elif command == "test":
            _show(args, client.webhooks.send_test(args.id))
        elif command == "deliveries":
            found = client.webhooks.deliveries(args.id, status=args.status)
            rows = [d for _, d in zip(range(args.limit), found, strict=False)]
            print(output.as_json(rows) if args.json else output.table(rows, DELIVERY_COLUMNS))
        elif command == "retry":
            _show(args, client.deliveries.retry(args.delivery_id))
        else:
            requeued = client.webhooks.recover(args.id, since=args.since)
            print(output.as_json({"requeued": requeued}) if args.json else f"requeued {requeued}")
    return OK


def _providers(args: argparse.Namespace) -> int:
    with _client(args) as client:
        found = client.providers.list()
    if args.json:
        print(output.as_json(found))
        return OK
    rows = [
        {
            "id": p.id,
            "enabled": "yes" if p.enabled else "no",
            "aspect_ratios": p.capabilities.aspect_ratios,
            "resolutions": p.capabilities.resolutions,
            "durations": p.capabilities.durations,
            "image": "yes" if p.capabilities.image_input else "no",
            "seed": "yes" if p.capabilities.seed else "no",
            "negative": "yes" if p.capabilities.negative_prompt else "no",
            "running": _capacity(p.capacity.running, p.capacity.effective_limit) if p.capacity else "",
            "waiting": p.capacity.waiting if p.capacity else "",
            "health": p.health.state if p.health else "",
        }
        for p in found
    ]
    print(output.rows_table(rows, PROVIDER_COLUMNS))
    return OK


def _models(args: argparse.Namespace) -> int:
    with _client(args) as client:
        found = client.models.list(
            provider=args.provider,
            image_to_video=True if args.image else None,
            duration=args.duration,
            aspect_ratio=args.aspect_ratio,
            resolution=args.resolution,
            enabled=True if args.enabled else None,
        )
    if args.json:
        print(output.as_json(found))
        return OK

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    rows = [
        {
            "provider": m.provider,
            "id": m.id,
            "default": yes(m.default),
            "enabled": yes(m.enabled),
            "durations": m.durations,
            "aspect_ratios": m.aspect_ratios,
            "resolutions": m.resolutions,
            "text": yes(m.text_to_video),
            "image": yes(m.image_to_video),
            "seed": yes(m.seed),
            "negative": yes(m.negative_prompt),
            "usd_per_second": ", ".join(f"{p.resolution or 'any'} ${p.usd_per_second:g}" for p in m.prices),
        }
        for m in found
    ]
    print(output.rows_table(rows, MODEL_COLUMNS))
    return OK


def _models_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    smodels = _command(
        sub, "models", "each provider's models: what each makes and takes, its price, the default", _models
    )
    smodels.add_argument("--provider", metavar="PROVIDER", help="only this provider's models")
    smodels.add_argument("--image", action="store_true", help="only models that take a first frame")
    smodels.add_argument("--duration", type=int, help="only models that make a video this long")
    smodels.add_argument("--aspect-ratio", **_open_choice(AspectRatio, "aspect ratio"))
    smodels.add_argument("--resolution", **_open_choice(Resolution, "resolution"))
    smodels.add_argument("--enabled", action="store_true", help="only models of providers offered here")


def _capacity(running: int, limit: int | None) -> str:
    """``running/limit`` (the limit in use now), or the count alone without a limit."""
    return f"{running}/{limit}" if limit is not None else str(running)


def _image(text: str) -> str | Path:
    """A URL or an upload id as given; anything else is a file to upload."""
    if text.startswith(("http://", "https://", "upl_")):
        return text
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL, an upload id or a file")
    return path


def _metadata_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def _usage(args: argparse.Namespace) -> int:
    with _client(args) as client:
        usage = client.usage.get(start=args.start, end=args.end, api_key_id=args.key_id)
    if args.json:
        print(output.as_json(usage))
        return OK
    print(output.table(usage.data, USAGE_COLUMNS))
    total = usage.total
    print(
        f"\n{total.generations} generations, {total.seconds} s asked for, {total.video_seconds} s of video "
        f"made ({usage.start:%Y-%m-%d %H:%M} to {usage.end:%Y-%m-%d %H:%M} UTC)"
    )
    return OK


def _audit(args: argparse.Namespace) -> int:
    with _client(args) as client:
        found = client.audit_events.list(type=args.type or None, target_id=args.target)
        rows = [e for _, e in zip(range(args.limit), found, strict=False)]
    print(output.as_json(rows) if args.json else output.table(rows, AUDIT_COLUMNS))
    return OK


def _events(args: argparse.Namespace) -> int:
    with _client(args) as client:
        if args.events_command == "get":
            _show(args, client.events.get(args.id))
            return OK
        found = client.events.list(type=args.type or None, subject_id=args.subject)
        events = [e for _, e in zip(range(args.limit), found, strict=False)]
    if args.json:
        print(output.as_json(events))
    else:
        rows = [{**e.model_dump(mode="json"), "subject": f"{e.subject.type} {e.subject.id}"} for e in events]
        print(output.rows_table(rows, EVENT_COLUMNS))
    return OK


def _keys(args: argparse.Namespace) -> int:
    with _client(args) as client:
        account.keys(client, args)
    return OK


def _budgets(args: argparse.Namespace) -> int:
    with _client(args) as client:
        account.budgets(client, args)
    return OK


def _listen(args: argparse.Namespace) -> int:
    with _client(args) as client:
        return listen(
            client,
            events=args.events,
            port=args.port,
            public_url=args.public_url,
            forward_to=args.forward_to,
            as_json=args.json,
        )


# --- arguments ------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vg", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    _global_options(parser, None)
    sub = parser.add_subparsers(dest="command", required=True)

    _command(
        sub, "login", "check an API key (--api-key, and --base-url) and save it for later commands", _login
    )

    generate = _command(sub, "generate", "submit a generation", _generate)
    generate.add_argument("prompt")
    generate.add_argument(
        "--provider",
        default="mock",
        metavar="PROVIDER",
        help=f"{', '.join(known(Provider))}, ..., or auto: any enabled provider that can make it",
    )
    generate.add_argument("--duration", type=int, default=5, help="seconds, 3-10")
    generate.add_argument("--model", help="the provider's model (see `vg models`; default: its default)")
    generate.add_argument("--aspect-ratio", **_open_choice(AspectRatio, "aspect ratio (see `vg providers`)"))
    generate.add_argument("--resolution", **_open_choice(Resolution, "resolution (see `vg providers`)"))
    generate.add_argument("--seed", type=int, help="the same seed and prompt, the same video")
    generate.add_argument("--negative-prompt", help="what the video should not show")
    generate.add_argument(
        "--image", type=_image, metavar="URL|FILE|UPLOAD_ID", help="the first frame (a file is uploaded)"
    )
    generate.add_argument(
        "--metadata", type=_metadata_pair, action="append", metavar="KEY=VALUE", help="your own ids (repeat)"
    )
    generate.add_argument(
        "--priority",
        metavar="PRIORITY",
        help=f"{', '.join(known(Priority))}: the order your generations start in when they wait for capacity "
        "(default normal)",
    )
    generate.add_argument(
        "--fallback",
        type=_providers_list,
        metavar="PROVIDER[,PROVIDER...]",
        help="where else it may go, in order (with --provider auto: the only providers it may go to); "
        "PROVIDER:MODEL names a model there",
    )
    generate.add_argument(
        "--sort", metavar="SORT", help=f"{', '.join(known(Sort))}: how --provider auto orders candidates"
    )
    generate.add_argument(
        "--fallback-on-failure",
        action="store_true",
        help="also move on when a provider accepted the task and then failed it (it may charge for that)",
    )
    generate.add_argument(
        "--retention-days",
        type=int,
        metavar="DAYS",
        help="delete its video and thumbnail this many days after it is made (sooner than the deployment)",
    )
    generate.add_argument("--wait", action="store_true", help="follow it until it is finished")
    generate.add_argument(
        "--download", type=Path, metavar="PATH", help="then save the video there (implies --wait)"
    )
    generate.add_argument("--timeout", type=float, default=600.0, help="seconds to wait at most")
    generate.add_argument("--idempotency-key", help="make repeating this command safe")

    _generation_commands(
        sub.add_parser("generations", help="list, read, wait for, cancel, delete and download generations")
    )
    _webhook_commands(sub.add_parser("webhooks", help="manage webhook endpoints and their deliveries"))
    _command(
        sub,
        "providers",
        "the providers, whether this deployment offers each, and what each makes",
        _providers,
    )

    _models_command(sub)
    susage = _command(sub, "usage", "generations and seconds of video by day, provider and status", _usage)
    susage.add_argument("--start", type=_moment, help="a date or an ISO 8601 time (default: 30 days ago)")
    susage.add_argument("--end", type=_moment, help="a date or an ISO 8601 time (default: now)")
    susage.add_argument("--key-id", help="only the generations made with this API key (its id)")
    saudit = _command(
        sub, "audit", "changes to the account's keys, budgets and webhooks, newest first", _audit
    )
    saudit.add_argument("--type", action="append", **_open_choice(AuditEventType, "type"))
    saudit.add_argument("--target", help="only changes to this webhook, key or delivery (its id)")
    saudit.add_argument("--limit", type=int, default=20)

    _event_commands(sub.add_parser("events", help="what happened on the account, as its webhooks deliver it"))
    _key_commands(sub.add_parser("keys", help="the account's API keys: make, list, read, revoke"))
    batch.add_commands(sub, _command, _client)
    sbudgets = _command(sub, "budgets", "the account's budgets and what is left of them", _budgets)
    _budget_commands(sbudgets)

    slisten = _command(sub, "listen", "receive the account's events here, verified, until Ctrl-C", _listen)
    slisten.add_argument(
        "--events",
        nargs="+",
        default=[*TERMINAL_EVENTS, "webhook.disabled"],
        **_open_choice(EventType, "event type"),
    )
    slisten.add_argument("--port", type=int, default=0, help="local port (default: any free one)")
    slisten.add_argument("--forward-to", metavar="URL", help="also POST each delivery, as received, there")
    slisten.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL the API should deliver to, if not this machine's (a tunnel)",
    )
    return parser


def _generation_commands(parser: argparse.ArgumentParser) -> None:
    gsub = parser.add_subparsers(dest="generations_command", required=True)
    glist = _command(gsub, "list", "the account's generations, newest first", _generations)
    glist.add_argument("--status", action="append", **_open_choice(Status, "status"))
    glist.add_argument("--provider", **_open_choice(Provider, "provider"))
    glist.add_argument(
        "--metadata", type=_metadata_pair, action="append", metavar="KEY=VALUE", help="only these (repeat)"
    )
    glist.add_argument(
        "--limit", type=int, default=20, help="at most this many (pages are fetched as needed)"
    )
    _command(gsub, "get", "one generation", _generations).add_argument("id")
    gwait = _command(gsub, "wait", "follow a generation until it is finished", _generations)
    gwait.add_argument("id")
    gwait.add_argument("--timeout", type=float, default=600.0)
    _command(gsub, "cancel", "cancel an unfinished generation", _generations).add_argument("id")
    _command(
        gsub,
        "delete",
        "delete a generation for good: its media, prompt and metadata (canceled first if unfinished)",
        _generations,
    ).add_argument("id")
    gdownload = _command(gsub, "download", "save a completed generation's video", _generations)
    gdownload.add_argument("id")
    gdownload.add_argument("path", type=Path)


def _event_commands(parser: argparse.ArgumentParser) -> None:
    esub = parser.add_subparsers(dest="events_command", required=True)
    elist = _command(esub, "list", "the account's events, newest first", _events)
    elist.add_argument("--type", action="append", **_open_choice(EventType, "event type"))
    elist.add_argument("--subject", help="only events about this generation, endpoint or account (its id)")
    elist.add_argument("--limit", type=int, default=20)
    _command(esub, "get", "one event, with the data its deliveries carried", _events).add_argument("id")


def _webhook_commands(parser: argparse.ArgumentParser) -> None:
    wsub = parser.add_subparsers(dest="webhooks_command", required=True)
    wcreate = _command(wsub, "create", "register an endpoint; prints its secret once", _webhooks)
    wcreate.add_argument("url")
    wcreate.add_argument(
        "--events", nargs="+", default=TERMINAL_EVENTS, **_open_choice(EventType, "event type")
    )
    _command(wsub, "list", "the account's endpoints", _webhooks)
    _command(wsub, "get", "one endpoint", _webhooks).add_argument("id")
    _command(wsub, "delete", "remove an endpoint", _webhooks).add_argument("id")
    _command(wsub, "rotate", "a new signing secret; both sign during the overlap", _webhooks).add_argument(
        "id"
    )
    _command(wsub, "test", "send the endpoint a test event now", _webhooks).add_argument("id")
    wdeliveries = _command(wsub, "deliveries", "an endpoint's delivery log, newest first", _webhooks)
    wdeliveries.add_argument("id")
    wdeliveries.add_argument("--status", **_open_choice(DeliveryStatus, "status"))
    wdeliveries.add_argument("--limit", type=int, default=20)
    _command(wsub, "retry", "send a failed delivery again now", _webhooks).add_argument("delivery_id")
    wrecover = _command(wsub, "recover", "queue again the failed deliveries since a moment", _webhooks)
    wrecover.add_argument("id")
    wrecover.add_argument(
        "--since", type=datetime.fromisoformat, required=True, help="ISO 8601, with a time zone"
    )


def _key_commands(parser: argparse.ArgumentParser) -> None:
    ksub = parser.add_subparsers(dest="keys_command", required=True)
    kcreate = _command(ksub, "create", "make a key; prints its secret once", _keys)
    kcreate.add_argument("name")
    kcreate.add_argument(
        "--scope",
        action="append",
        required=True,
        metavar="SCOPE",
        help=f"what it may do (repeat): {', '.join(known(Scope))}",
    )
    kcreate.add_argument(
        "--expires-at", type=_moment, help="when it stops working (ISO 8601; default: never)"
    )
    _budget_options(kcreate, "its own ")
    klist = _command(ksub, "list", "the account's keys, newest first (revoked ones too)", _keys)
    klist.add_argument("--limit", type=int, default=50)
    _command(ksub, "get", "one key", _keys).add_argument("id")
    _command(ksub, "revoke", "revoke a key: it stops working within seconds", _keys).add_argument("id")


def _budget_commands(parser: argparse.ArgumentParser) -> None:
    bsub = parser.add_subparsers(dest="budgets_command")
    _command(bsub, "show", "the budgets and what is left of them (the default)", _budgets)
    _budget_options(_command(bsub, "set", "replace the budgets (one not given has no limit)", _budgets), "")


def _budget_options(parser: argparse.ArgumentParser, whose: str) -> None:
    parser.add_argument(
        "--daily-video-seconds", type=int, metavar="N", help=f"{whose}seconds of video per UTC day"
    )
    parser.add_argument(
        "--monthly-video-seconds", type=int, metavar="N", help=f"{whose}seconds of video per calendar month"
    )
    parser.add_argument(
        "--daily-cost", type=float, metavar="USD", help=f"{whose}cost per UTC day, in dollars"
    )
    parser.add_argument(
        "--monthly-cost", type=float, metavar="USD", help=f"{whose}cost per calendar month, in dollars"
    )


def _moment(text: str) -> date | datetime:
    """A date (its midnight UTC, to the API) or an ISO 8601 time; without a time zone, UTC."""
    if len(text) == 10:
        return date.fromisoformat(text)
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _global_options(parser: argparse.ArgumentParser, default: object) -> None:
    """The options every command takes, before or after its name."""
    parser.add_argument(
        "--api-key", default=default, help="default: $VIDEOGEN_API_KEY, then the key `vg login` saved"
    )
    parser.add_argument(
        "--base-url", default=default, help="the API's base URL, ending in /v1 (default: $VIDEOGEN_BASE_URL)"
    )
    parser.add_argument(
        "--json", action="store_true", default=False if default is None else default, help="print JSON"
    )


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    _global_options(parser, argparse.SUPPRESS)  # not given after the name: what came before it stands
    parser.set_defaults(run=run)
    return parser
