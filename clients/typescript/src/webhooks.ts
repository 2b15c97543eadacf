/**
 * Verifying a videogen webhook delivery on Web Crypto: `unwrap` for a typed event, `verify` for the plain
 * payload. Needs no API key and no client:
 *
 *     import { unwrap, WebhookVerificationError } from "@videogen/client/webhooks";
 *
 *     const event = await unwrap(await request.text(), request.headers, secret); // the exact body received
 *     // drop duplicates by the webhook-id header: a delivery may arrive more than once
 *
 * Both signatures a delivery carries are checked, with the secret exactly as issued (`whsec_…`):
 *
 * - `webhook-signature` (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`,
 *   keyed with the base64-decoded part of the secret after `whsec_`; and `webhook-timestamp` must be within
 *   the tolerance of now, so a captured delivery cannot be replayed later.
 * - `X-Service-Signature`: lowercase hex HMAC-SHA256 of the body, keyed with the whole secret string.
 *
 * While a secret is being rotated both headers carry one signature per live secret, space-separated; a
 * delivery is genuine if any of them matches the secret you hold. Every candidate is checked by Web Crypto's
 * `verify` (constant-time), matched or not.
 */
import type { Generation } from "./models.js";
import { VideogenError } from "./core/errors.js";

export const DEFAULT_TOLERANCE_SECONDS = 300;
const SECRET_PREFIX = "whsec_";

/** The delivery is not verifiably from videogen (or is too old or too new); the message says why. */
export class WebhookVerificationError extends VideogenError {
  override name = "WebhookVerificationError";
}

/** The body as received: text, or its bytes. */
export type Payload = string | Uint8Array | ArrayBuffer;
/** A fetch `Headers`, or a plain object of headers (Node's `request.headers`); names in any case. */
export type HeadersLike = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time (for tests). */
  now?: Date;
}

/** A verified delivery's body: `{ event, timestamp, data }`. */
export interface WebhookEvent {
  /** `video.completed`, `video.failed`, `webhook.test`, …: a type this SDK does not know stays a string. */
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** The generation a `video.*` event is about (null for other events). */
  generation: Generation | null;
}

/** Check a delivery's signatures and timestamp; resolve to its parsed JSON payload. `payload` must be the
 * exact body received, before any JSON parsing. */
export async function verify(
  payload: Payload,
  headers: HeadersLike,
  secret: string,
  options: VerifyOptions = {},
): Promise<Record<string, unknown>> {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const msgId = header(headers, "webhook-id");
  const rawTimestamp = header(headers, "webhook-timestamp");
  const standard = header(headers, "webhook-signature");
  const service = header(headers, "x-service-signature");

  if (!/^\d+$/.test(rawTimestamp)) {
    throw new WebhookVerificationError(
      `webhook-timestamp is not Unix seconds: ${JSON.stringify(rawTimestamp)}`,
    );
  }
  const timestamp = Number(rawTimestamp);
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (timestamp < now - tolerance) {
    throw new WebhookVerificationError(
      `webhook-timestamp is ${Math.round(now - timestamp)} s old, more than the ${tolerance} s tolerance (a replay, or a clock far off)`,
    );
  }
  if (timestamp > now + tolerance) {
    throw new WebhookVerificationError(
      `webhook-timestamp is ${Math.round(timestamp - now)} s in the future, more than the ${tolerance} s tolerance (a clock far off)`,
    );
  }

  const body = toBytes(payload);
  const signed = concat(new TextEncoder().encode(`${msgId}.${rawTimestamp}.`), body);
  const standardKey = await hmacKey(standardKeyBytes(secret));
  const standardCandidates = standard
    .split(/\s+/)
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => fromBase64(entry.slice(3)));
  if (!(await anyMatches(standardKey, signed, standardCandidates))) {
    throw new WebhookVerificationError("no webhook-signature matches this secret");
  }
  const serviceKey = await hmacKey(new TextEncoder().encode(secret));
  if (!(await anyMatches(serviceKey, body, service.split(/\s+/).map(fromHex)))) {
    throw new WebhookVerificationError("no X-Service-Signature matches this secret");
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new WebhookVerificationError(`the body is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new WebhookVerificationError("the body is not a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** `verify`, then the payload as a typed event (`generation` set for a `video.*` event). */
export async function unwrap(
  payload: Payload,
  headers: HeadersLike,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const { event, timestamp, data } = await verify(payload, headers, secret, options);
  if (
    typeof event !== "string" ||
    typeof timestamp !== "string" ||
    typeof data !== "object" ||
    data === null
  ) {
    throw new WebhookVerificationError(
      "the payload is not a videogen event: it needs event, timestamp and data",
    );
  }
  const fields = data as Record<string, unknown>;
  return {
    event,
    timestamp,
    data: fields,
    generation: event.startsWith("video.") ? (fields as Generation) : null,
  };
}

function header(headers: HeadersLike, name: string): string {
  let value: string | readonly string[] | null | undefined;
  if (typeof Headers !== "undefined" && headers instanceof Headers) {
    value = headers.get(name);
  } else {
    const found = Object.entries(headers as Record<string, string | readonly string[] | undefined>).find(
      ([key]) => key.toLowerCase() === name,
    );
    value = found?.[1];
  }
  const text = typeof value === "string" ? value : value?.join(" ");
  if (!text) throw new WebhookVerificationError(`missing header ${name}`);
  return text;
}

function toBytes(payload: Payload): Uint8Array<ArrayBuffer> {
  if (typeof payload === "string") return new TextEncoder().encode(payload);
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload.slice(0));
  return new Uint8Array(payload);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function standardKeyBytes(secret: string): Uint8Array<ArrayBuffer> {
  const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (key === null || key.byteLength === 0) {
    throw new WebhookVerificationError("the secret is not a whsec_ secret as issued");
  }
  return key;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const binary = atob(text);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (text.length % 2 !== 0 || !/^[0-9a-f]*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

function hmacKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

/** Whether any candidate is the HMAC of `data`: each is checked by Web Crypto (in constant time), so how
 * long it takes says nothing about which one matched. */
async function anyMatches(
  key: CryptoKey,
  data: Uint8Array<ArrayBuffer>,
  candidates: (Uint8Array<ArrayBuffer> | null)[],
): Promise<boolean> {
  const results = await Promise.all(
    candidates.map((candidate) =>
      candidate === null ? false : crypto.subtle.verify("HMAC", key, candidate, data),
    ),
  );
  return results.includes(true);
}
