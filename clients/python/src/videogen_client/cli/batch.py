"""``vg batch``: submit a JSONL file of prompts as one batch (``submit FILE [--wait]``, with a progress line),
read it (``get``), list them (``list``), cancel what has not started (``cancel``) and write its results file
(``results ID > out.jsonl``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from videogen_client._client import Client
from videogen_client.cli import output
from videogen_client.errors import APITimeoutError
from videogen_client.resources.batches import Batch

BATCH_COLUMNS = ("id", "status", "created_at", "finished_at", "cost")
OK, FAILED, USAGE, TIMED_OUT = 0, 1, 2, 5
BAR = 30


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    command: Callable[..., argparse.ArgumentParser],
    client_of: Callable[[argparse.Namespace], Client],
) -> None:
    """``vg batch ...`` on the parser's subcommands (``command`` makes one, ``client_of`` the client)."""

    def run(args: argparse.Namespace) -> int:
        with client_of(args) as client:
            return _run(client, args)

    parser = command(sub, "batch", "submit many prompts as one batch, follow it, and fetch its results", run)
    bsub = parser.add_subparsers(dest="batch_command", required=True)
    submit = bsub.add_parser("submit", help="submit a JSONL file: one item per line (the body of a generate)")
    submit.add_argument("file", type=Path, help="JSONL: one JSON object per line, or - for stdin")
    submit.add_argument("--provider", default="mock", help="for items that name none (default: mock)")
    submit.add_argument("--duration", type=int, default=5, help="for items that give none (default: 5)")
    submit.add_argument("--skip-invalid", action="store_true", help="accept the valid items, list the others")
    submit.add_argument("--no-item-events", action="store_true", help="no video.* webhooks for the items")
    submit.add_argument("--idempotency-key", help="re-sending with the same key answers the same batch")
    submit.add_argument("--wait", action="store_true", help="follow it to its end, with a progress line")
    submit.add_argument("--timeout", type=float, default=None, help="seconds to wait at most")
    submit.add_argument("--poll", type=float, default=2.0, help="seconds between reads while waiting")
    for name, what in (("get", "read a batch"), ("cancel", "cancel what has not started")):
        bsub.add_parser(name, help=what).add_argument("id")
    results = bsub.add_parser("results", help="write its results file (JSONL) to stdout")
    results.add_argument("id")
    listing = bsub.add_parser("list", help="the account's batches, newest first")
    listing.add_argument("--limit", type=int, default=20)
    for each in bsub.choices.values():  # --json after the subcommand too
        each.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def _items(path: Path, provider: str, duration: int) -> list[dict[str, Any]]:
    text = sys.stdin.read() if str(path) == "-" else path.read_text()
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not JSON ({exc.msg})") from None
        if isinstance(item, str):
            item = {"prompt": item}
        if not isinstance(item, dict):
            raise ValueError(f"line {number}: give a JSON object (or a string: the prompt)")
        items.append({"provider": provider, "duration": duration, **item})
    return items


def progress_line(batch: Batch) -> str:
    """``[#####.....] 512/1000 ended: 500 completed, 10 failed, 2 canceled (in_progress)``."""
    counts = batch.counts
    done = counts.ended
    filled = BAR * done // counts.total if counts.total else BAR
    return (
        f"[{'#' * filled}{'.' * (BAR - filled)}] {done}/{counts.total} ended: {counts.completed} completed, "
        f"{counts.failed} failed, {counts.canceled} canceled ({batch.status})"
    )


def _run(client: Client, args: argparse.Namespace) -> int:
    command = args.batch_command
    if command == "submit":
        try:
            items = _items(args.file, args.provider, args.duration)
        except (OSError, ValueError) as exc:
            print(f"vg batch submit: {exc}", file=sys.stderr)
            return USAGE
        batch = client.batches.create(
            items,
            on_invalid="skip" if args.skip_invalid else None,
            item_events=False if args.no_item_events else None,
            idempotency_key=args.idempotency_key,
        )
        for refused in batch.refused:
            print(f"vg: item {refused.index} refused: {refused.errors[0].message}", file=sys.stderr)
        if args.wait:
            print(f"vg: batch {batch.id}: {batch.counts.total} items", file=sys.stderr)

            def show(current: Batch) -> None:
                print("\r" + progress_line(current), end="", file=sys.stderr, flush=True)

            try:
                batch = client.batches.wait(
                    batch.id, on_progress=show, poll_interval=args.poll, timeout=args.timeout
                )
            except APITimeoutError as exc:
                print(f"\nvg: {exc}", file=sys.stderr)
                return TIMED_OUT
            print(file=sys.stderr)
        print(output.as_json(batch) if args.json else output.fields(batch))
        return FAILED if args.wait and (batch.counts.failed or batch.counts.canceled) else OK
    if command == "results":
        for line in client.batches.results_lines(args.id):
            sys.stdout.write(line + "\n")
        return OK
    if command == "list":
        found = [b for _, b in zip(range(args.limit), client.batches.list(), strict=False)]
        print(output.as_json(found) if args.json else output.table(found, BATCH_COLUMNS))
        return OK
    if command == "cancel":
        answer = client.batches.cancel(args.id)
        if args.json:
            print(output.as_json(answer))
        else:
            print(f"canceled {answer.canceled}; left to finish: {len(answer.not_canceled)}")
            print(progress_line(answer.batch))
        return OK
    batch = client.batches.retrieve(args.id)
    print(output.as_json(batch) if args.json else output.fields(batch))
    return OK
