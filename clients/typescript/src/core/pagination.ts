/** Cursor-paged listings: one page, or every item of every page as the caller iterates (`for await`). */

/** One page of a listing, as the API answers it, with the way to the next. Iterating it (`for await`) gives
 * its items and those of every page after it, fetched as needed. */
export class Page<T> implements AsyncIterable<T> {
  readonly data: T[];
  /** Pass as `cursor` for the next page; null on the last. */
  readonly next_cursor: string | null;
  readonly #fetch: (cursor: string) => Promise<Page<T>>;

  constructor(
    answer: { data: T[]; next_cursor?: string | null },
    fetch: (cursor: string) => Promise<Page<T>>,
  ) {
    this.data = answer.data;
    this.next_cursor = answer.next_cursor ?? null;
    this.#fetch = fetch;
  }

  hasNextPage(): boolean {
    return this.next_cursor !== null;
  }

  /** The page after this one; null after the last. */
  async getNextPage(): Promise<Page<T> | null> {
    return this.next_cursor === null ? null : this.#fetch(this.next_cursor);
  }

  /** This page and every one after it. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    for (let page: Page<T> | null = this; page !== null; page = await page.getNextPage()) yield page;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/** A listing call: `await` it for its first page, or iterate it (`for await`) for every item of every page.
 * The first request is made when it is first awaited or iterated. */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #first: () => Promise<Page<T>>;
  #started: Promise<Page<T>> | undefined;

  constructor(first: () => Promise<Page<T>>) {
    this.#first = first;
  }

  #page(): Promise<Page<T>> {
    this.#started ??= this.#first();
    return this.#started;
  }

  then<A = Page<T>, B = never>(
    onfulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#page().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.#page().catch(onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    yield* await this.#page();
  }
}
