/** `client.uploads`, `client.providers` and `client.models`. */
import type { RequestOptions, Transport } from "../core/transport.js";
import type { ModelInfo, ModelList, ProviderInfo, ProviderList, Upload } from "../models.js";
import type { operations } from "../generated/openapi.js";

/** What `client.models.list` filters by: each one given must hold. */
export type ModelListParams = NonNullable<operations["listModels"]["parameters"]["query"]>;

/** An image: a `Blob` or `File`, its bytes, or a stream of them (a web `ReadableStream`, or any async
 * iterable of bytes, such as a Node stream from `fs.createReadStream`). */
export type UploadSource =
  Blob | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export function isUploadSource(value: unknown): value is UploadSource {
  return (
    value instanceof Blob ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value) ||
    value instanceof ReadableStream ||
    (typeof value === "object" && value !== null && Symbol.asyncIterator in value)
  );
}

async function toBlob(source: UploadSource): Promise<Blob> {
  if (source instanceof Blob) return source;
  if (source instanceof ArrayBuffer) return new Blob([source]);
  if (ArrayBuffer.isView(source)) {
    return new Blob([new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice()]);
  }
  if (source instanceof ReadableStream) return new Response(source).blob();
  const parts: Uint8Array[] = [];
  for await (const piece of source)
    parts.push(typeof piece === "string" ? new TextEncoder().encode(piece) : piece);
  return new Blob(parts.map((part) => part.slice()));
}

export interface UploadOptions extends RequestOptions {
  /** The file name sent (a `File`'s own by default). */
  filename?: string;
}

export class Uploads {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Upload an image (PNG, JPEG or WebP; the API tells the type from the content) for use as a first frame:
   * pass its `id` as `image` to `generations.create`. */
  async create(file: UploadSource, options: UploadOptions = {}): Promise<Upload> {
    const { filename, ...call } = options;
    const blob = await toBlob(file);
    const form = new FormData();
    const name = filename ?? (typeof File !== "undefined" && blob instanceof File ? blob.name : "image");
    form.append("file", blob, name);
    return this.#t.request("POST", "uploads", { ...call, form });
  }

  /** The upload, until it expires or is deleted (then `NotFoundError`). */
  get(id: string, options?: RequestOptions): Promise<Upload> {
    return this.#t.request("GET", `uploads/${encodeURIComponent(id)}`, options);
  }

  /** Delete the upload's image from storage now; it can no longer be used as a first frame. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.request("DELETE", `uploads/${encodeURIComponent(id)}`, options);
  }
}

export class Providers {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Every provider the API knows, whether this deployment offers it, and what it can make. */
  async list(options?: RequestOptions): Promise<ProviderInfo[]> {
    return (await this.#t.request<ProviderList>("GET", "providers", options)).data;
  }
}

export class Models {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Every model of every provider, as this deployment configures them: what each makes and takes, its
   * prices, whether it is its provider's default. Filters: `{ provider: "runway", image_to_video: true,
   * duration: 10 }`. Name one as `model` in `generations.create`. */
  async list(params: ModelListParams = {}, options?: RequestOptions): Promise<ModelInfo[]> {
    return (await this.#t.request<ModelList>("GET", "models", { ...options, query: params })).data;
  }
}
