/**
 * Server-Sent Events, parsed as the HTML standard says (the event stream interpretation): lines end in CRLF,
 * LF or CR; `:` starts a comment; `data` lines accumulate; a blank line dispatches the event; `id` persists
 * until changed.
 */

export interface ServerSentEvent {
  /** The event's type (`message` when the stream names none). */
  event: string;
  data: string;
  /** The last event id the stream set (carried over from earlier events when this one has none). */
  id: string;
  /** A reconnection delay the server asked for, in milliseconds. */
  retry?: number;
}

/** Turns the text of a stream, given in pieces of any size, into its events. */
export class EventParser {
  #pending = "";
  #sawCR = false;
  #data: string[] = [];
  #event = "";
  #id = "";
  #retry: number | undefined;

  constructor(lastEventId = "") {
    this.#id = lastEventId;
  }

  /** The events `text` completes. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const char = text.charCodeAt(i);
      if (char === 10 && this.#sawCR && i === 0 && this.#pending === "") {
        // The LF of a CRLF split across pieces.
        this.#sawCR = false;
        start = 1;
        continue;
      }
      if (char !== 10 && char !== 13) continue;
      const line = this.#pending + text.slice(start, i);
      this.#pending = "";
      if (char === 13 && text.charCodeAt(i + 1) === 10) i++;
      this.#sawCR = char === 13 && i === text.length - 1;
      start = i + 1;
      const event = this.#line(line);
      if (event) events.push(event);
    }
    if (start < text.length) {
      this.#sawCR = false;
      this.#pending += text.slice(start);
    }
    return events;
  }

  #line(line: string): ServerSentEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.#data.push(value);
        break;
      case "event":
        this.#event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.#id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  #dispatch(): ServerSentEvent | undefined {
    if (this.#data.length === 0) {
      this.#event = "";
      return undefined;
    }
    const event: ServerSentEvent = {
      event: this.#event || "message",
      data: this.#data.join("\n"),
      id: this.#id,
    };
    if (this.#retry !== undefined) event.retry = this.#retry;
    this.#data = [];
    this.#event = "";
    return event;
  }
}
