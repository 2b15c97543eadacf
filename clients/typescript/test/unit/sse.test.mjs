// The event stream parser, as the HTML standard reads a stream: any line ending, split anywhere.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EventParser } from "../../dist/core/sse.js";

function parse(pieces, lastEventId) {
  const parser = new EventParser(lastEventId);
  return pieces.flatMap((piece) => parser.push(piece));
}

test("events end at a blank line; comments and unknown fields are ignored", () => {
  const events = parse([': keep-alive\n\nid: 1:\nevent: generation\ndata: {"a":1}\nfoo: bar\n\n']);
  assert.deepEqual(events, [{ event: "generation", data: '{"a":1}', id: "1:" }]);
});

test("every line ending, and a stream split at every character, read the same", () => {
  const text = "id: 7:40\r\nevent: generation\rdata: one\ndata:two\r\n\r\ndata: three\n\n";
  const whole = parse([text]);
  assert.deepEqual(whole, [
    { event: "generation", data: "one\ntwo", id: "7:40" },
    { event: "message", data: "three", id: "7:40" }, // the id carries over
  ]);
  assert.deepEqual(parse([...text]), whole);
  for (let cut = 1; cut < text.length; cut++) {
    assert.deepEqual(parse([text.slice(0, cut), text.slice(cut)]), whole, `split at ${cut}`);
  }
});

test("an event with no data is not dispatched; an unfinished one at the end is dropped", () => {
  assert.deepEqual(parse(["event: generation\n\ndata: x"]), []);
});

test("retry is read; the last event id given at the start is kept until the stream sets one", () => {
  assert.deepEqual(parse(["retry: 2500\ndata: x\n\n"], "3:"), [
    { event: "message", data: "x", id: "3:", retry: 2500 },
  ]);
});
