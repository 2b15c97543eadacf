// Batches: the account's batches (paged, newest first, each with its progress), and a batch's page: its
// progress bar and counts by state, read again every second until it has ended; its items (paged, filtered by
// state and custom_id); cancel (with what could not be canceled); and its results file to download.
import { api, apiDownload, ApiError } from "./api.js";
import { announce, append, clear, field, h, notice, select, statusBadge, when } from "./dom.js";
import { describe } from "./generations.js";

const FINISHED = new Set(["completed", "canceled", "failed"]);
const COUNTS = [
  ["queued", "Queued", "waiting their turn"],
  ["processing", "Processing", "written, not ended"],
  ["completed", "Completed", "made their video"],
  ["failed", "Failed", "ended without one"],
  ["canceled", "Canceled", "canceled before they started"],
];
const POLL_MS = 1000;
const ITEM_STATES = ["queued", "processing", "completed", "failed"];

function ended(batch) {
  const c = batch.counts;
  return c.completed + c.failed + c.canceled;
}

function usd(amount) {
  return `$${Number(amount).toFixed(amount < 1 ? 4 : 2)}`;
}

/** A <progress> of the batch's ended items, with its label (what a screen reader reads as its name). */
function progressOf(batch, id) {
  const labelId = `${id}-label`;
  const total = batch.counts.total;
  const done = ended(batch);
  const bar = h("progress", { id, max: Math.max(total, 1), "aria-labelledby": labelId });
  bar.value = total ? done : FINISHED.has(batch.status) ? 1 : 0;
  const percent = total ? Math.floor((done * 100) / total) : FINISHED.has(batch.status) ? 100 : 0;
  const label = h("span.hint", { id: labelId }, `${done} of ${total} items ended (${percent}%)`);
  return h("div.batch-progress", {}, bar, " ", label);
}

/** Waits ``ms`` unless the page is left first. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = window.setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { window.clearTimeout(timer); resolve(); }, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------------- list

export async function batchList(main, { signal }) {
  const outcome = h("div");
  const body = h("tbody");
  const caption = h("caption", {}, "Newest first.");
  const table = h("div.table-wrap", {}, h("table", { id: "batches" }, caption,
    h("thead", {}, h("tr", {}, ["Batch", "Status", "Progress", "Metadata", "Created"].map((t) => h("th", { scope: "col" }, t)))),
    body));
  const previous = h("button.quiet", { type: "button", disabled: true }, "Previous page");
  const next = h("button.quiet", { type: "button", disabled: true }, "Next page");
  const refresh = h("button.quiet", { type: "button" }, "Refresh");
  main.append(
    h("h1", {}, "Batches"),
    h("p.hint", {}, "Batches are submitted with the API (POST /v1/batches), the SDKs or vg batch submit."),
    outcome, table, h("nav.actions", { "aria-label": "Pages" }, previous, next, refresh),
  );
  const cursors = [null];
  let page = 0;
  let generation = 0; // a load superseded by a newer one writes nothing

  async function load() {
    generation += 1;
    const mine = generation;
    let answer;
    try {
      answer = await api("GET", "/batches", { query: { limit: 20, cursor: cursors[page] || undefined }, signal });
    } catch (error) {
      if (signal.aborted || mine !== generation) return null;
      clear(outcome).append(notice("error", describe(error)));
      return null;
    }
    if (mine !== generation) return null;
    clear(outcome);
    clear(body);
    for (const batch of answer.data) {
      body.append(h("tr", { "data-id": batch.id },
        h("td", {}, h("a", { href: `#/batches/${batch.id}` }, h("code", {}, batch.id))),
        h("td", {}, statusBadge(batch.status)),
        h("td", {}, progressOf(batch, `progress-${batch.id}`)),
        h("td", {}, Object.entries(batch.metadata || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "—"),
        h("td", {}, when(batch.created_at))));
    }
    if (!answer.data.length) body.append(h("tr", {}, h("td", { colspan: 5 }, "No batches yet.")));
    cursors[page + 1] = answer.next_cursor;
    previous.disabled = page === 0;
    next.disabled = !answer.next_cursor;
    caption.textContent = `Newest first. Page ${page + 1}.`;
    return answer.data.some((b) => !FINISHED.has(b.status));
  }

  next.addEventListener("click", () => { page += 1; load(); });
  previous.addEventListener("click", () => { page = Math.max(0, page - 1); load(); });
  refresh.addEventListener("click", () => load());
  let unfinished = await load();
  announce(`Batches, page ${page + 1}.`);
  // While a batch shown is unfinished (or the last read failed), the page is read again every few seconds.
  (async () => {
    while (unfinished !== false && !signal.aborted) {
      await pause(POLL_MS * 3, signal);
      if (!signal.aborted) unfinished = await load();
    }
  })();
}

// ---------------------------------------------------------------------------------------------------- detail

export async function batchDetail(main, { signal, params: [id] }) {
  let batch;
  try {
    batch = await api("GET", `/batches/${id}`, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      main.append(h("h1", {}, "Batch not found"), notice("error", `No batch ${id} in this account.`));
      return;
    }
    throw error;
  }
  const facts = h("dl.facts", { id: "batch-facts" });
  const progressSlot = h("div", { id: "batch-progress-slot" });
  const counts = h("dl.counts", { id: "batch-counts" });
  const errorSlot = h("div", { id: "batch-error" });
  const refusedSlot = h("div", { id: "batch-refused" });
  const cancel = h("button.danger", { type: "button", id: "cancel-batch" }, "Cancel batch");
  const download = h("button", { type: "button", id: "download-results" }, "Download results (JSONL)");
  const confirmSlot = h("div");
  const outcome = h("div", { id: "batch-outcome" });
  const actions = h("div.actions", {}, cancel, download);

  // Its items: filtered by state and custom_id, paged with the API's cursor.
  const state = field("State", select([["", "Any"], ...ITEM_STATES.map((s) => [s, s])], ""));
  const customId = field("Custom id", h("input", { type: "text", autocomplete: "off", spellcheck: "false" }));
  const filters = h("form.filters", { "aria-label": "Item filters", id: "item-filters" },
    state.wrap, customId.wrap, h("div.actions", {}, h("button", { type: "submit" }, "Show items")));
  const itemsOutcome = h("div");
  const itemsBody = h("tbody");
  const itemsCaption = h("caption", {}, "In the order given.");
  const itemsTable = h("div.table-wrap", {}, h("table", { id: "batch-items" }, itemsCaption,
    h("thead", {}, h("tr", {}, ["Custom id", "Status", "Generation", "Outcome"].map((t) => h("th", { scope: "col" }, t)))),
    itemsBody));
  const previous = h("button.quiet", { type: "button", disabled: true }, "Previous items");
  const next = h("button.quiet", { type: "button", disabled: true }, "Next items");

  main.append(
    h("h1", {}, "Batch ", h("code", {}, id)),
    facts, progressSlot, counts, errorSlot, actions, confirmSlot, outcome, refusedSlot,
    h("h2", {}, "Items"), filters, itemsOutcome, itemsTable,
    h("nav.actions", { "aria-label": "Item pages" }, previous, next),
  );

  function render(b) {
    append(clear(facts), [
      h("dt", {}, "Status"), h("dd", { id: "batch-status" }, statusBadge(b.status)),
      h("dt", {}, "Created"), h("dd", {}, when(b.created_at)),
      h("dt", {}, "Finished"), h("dd", { id: "batch-finished" }, b.finished_at ? when(b.finished_at) : "not yet"),
      b.estimated_cost !== null && b.estimated_cost !== undefined
        ? [h("dt", {}, "Estimated cost"), h("dd", {}, usd(b.estimated_cost))] : null,
      h("dt", {}, "Cost so far"), h("dd", { id: "batch-cost" }, usd(b.cost)),
      h("dt", {}, "Item webhooks"), h("dd", {}, b.item_events ? "each item's video.* events" : "batch.completed only"),
      Object.entries(b.metadata || {}).flatMap(([k, v]) => [h("dt", {}, `Metadata: ${k}`), h("dd", {}, v)]),
    ]);
    clear(progressSlot).append(progressOf(b, "batch-progress"));
    clear(counts).append(
      h("div", {}, h("dt", {}, "Total"), h("dd", { "data-count": "total" }, String(b.counts.total))),
      ...COUNTS.map(([name, label, hint]) => h("div", { title: hint },
        h("dt", {}, label), h("dd", { "data-count": name }, String(b.counts[name])))),
    );
    clear(errorSlot);
    if (b.error) {
      errorSlot.append(notice(b.status === "failed" ? "error" : "warn",
        h("strong", {}, b.status === "failed" ? "Failed: " : "Note: "),
        h("code", {}, b.error.code), " — ", b.error.message));
    }
    clear(refusedSlot);
    if (b.refused && b.refused.length) {
      refusedSlot.append(h("h2", {}, `Refused at submission (${b.refused.length})`),
        h("ul", { id: "refused-items" }, b.refused.map((r) => h("li", {},
          `#${r.index}`, r.custom_id ? ` (${r.custom_id})` : "", ": ",
          r.errors.map((e) => `${e.field}: ${e.message}`).join("; ")))));
    }
    cancel.hidden = FINISHED.has(b.status) || b.status === "validating" || b.status === "canceling";
    download.hidden = !FINISHED.has(b.status) || b.counts.total === 0;
  }

  // ---- items
  const cursors = [null];
  let page = 0;
  let itemsLoad = 0;

  async function loadItems({ quiet = false } = {}) {
    itemsLoad += 1;
    const mine = itemsLoad;
    const query = {
      status: state.control.value || undefined,
      custom_id: customId.control.value.trim() || undefined,
      limit: 20,
      cursor: cursors[page] || undefined,
    };
    let answer;
    try {
      answer = await api("GET", `/batches/${id}/generations`, { query, signal });
    } catch (error) {
      if (!signal.aborted && mine === itemsLoad) clear(itemsOutcome).append(notice("error", describe(error)));
      return;
    }
    if (mine !== itemsLoad) return;
    clear(itemsOutcome);
    clear(itemsBody);
    for (const g of answer.data) {
      const status = h("td", {}, statusBadge(g.status));
      if (g.status === "processing" && g.progress !== null && g.progress !== undefined) {
        status.append(" ", h("span.hint.item-progress", {}, `${g.progress}%`));
      }
      let result = "—";
      if (g.error) result = h("span", {}, h("code", {}, g.error.code), ` ${g.error.message}`);
      else if (g.video_url) result = h("a", { href: g.video_url, download: `${g.id}.mp4` }, "video");
      itemsBody.append(h("tr", { "data-id": g.id },
        h("td", {}, g.custom_id ?? "—"), status,
        h("td", {}, h("a", { href: `#/generations/${g.id}` }, h("code", {}, g.id))),
        h("td", {}, result)));
    }
    if (!answer.data.length) itemsBody.append(h("tr", {}, h("td", { colspan: 4 }, "No items match.")));
    cursors[page + 1] = answer.next_cursor;
    previous.disabled = page === 0;
    next.disabled = !answer.next_cursor;
    itemsCaption.textContent = `In the order given. Page ${page + 1}.`;
    if (!quiet) announce(`${answer.data.length} items shown, page ${page + 1}.`);
  }

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    cursors.length = 1;
    page = 0;
    loadItems();
  });
  next.addEventListener("click", () => { page += 1; loadItems(); });
  previous.addEventListener("click", () => { page = Math.max(0, page - 1); loadItems(); });

  // ---- cancel, with a confirmation
  cancel.addEventListener("click", () => {
    const yes = h("button.danger", { type: "button" }, "Yes, cancel it");
    const no = h("button.quiet", { type: "button" }, "Keep it running");
    clear(confirmSlot).append(h("div.notice", { role: "group", "aria-label": "Confirm canceling the batch" },
      h("p", {}, "Cancel every item that has not started? Items already at a provider finish (and are paid for)."),
      h("div.actions", {}, yes, no)));
    no.addEventListener("click", () => { clear(confirmSlot); cancel.focus(); });
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      clear(outcome);
      try {
        const answer = await api("POST", `/batches/${id}/cancel`, { signal });
        clear(confirmSlot);
        batch = answer.batch;
        render(batch);
        const left = answer.not_canceled;
        outcome.append(notice("ok",
          h("p", { id: "canceled-count" }, `Canceled ${answer.canceled} item${answer.canceled === 1 ? "" : "s"}.`),
          left.length
            ? [h("p", {}, `${left.length} had started and could not be canceled; they will finish:`),
              h("ul", { id: "not-canceled" }, left.map((g) => h("li", {}, h("a", { href: `#/generations/${g}` }, h("code", {}, g)))))]
            : h("p", {}, "Every unfinished item was canceled.")));
        announce(`Canceled ${answer.canceled} items; ${left.length} could not be canceled.`);
        loadItems({ quiet: true });
      } catch (error) {
        yes.disabled = false;
        if (!signal.aborted) outcome.append(notice("error", describe(error)));
      }
    });
    no.focus();
  });

  // ---- results
  download.addEventListener("click", async () => {
    download.disabled = true;
    try {
      const blob = await apiDownload(`/batches/${id}/results`, { signal });
      const url = URL.createObjectURL(blob);
      const link = h("a", { href: url, download: `${id}-results.jsonl`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
      announce("Results downloaded.");
    } catch (error) {
      if (!signal.aborted) clear(outcome).append(notice("error", describe(error)));
    } finally {
      download.disabled = false;
    }
  });

  render(batch);
  await loadItems({ quiet: true });

  // ---- live: read again every second until it has ended (and its items' page with it).
  if (!FINISHED.has(batch.status)) {
    (async () => {
      while (!signal.aborted && !FINISHED.has(batch.status)) {
        await pause(POLL_MS, signal);
        if (signal.aborted) return;
        let fresh;
        try {
          fresh = await api("GET", `/batches/${id}`, { signal });
        } catch {
          continue; // the next read may do better
        }
        if (signal.aborted) return;
        batch = fresh;
        render(batch);
        await loadItems({ quiet: true });
        if (FINISHED.has(batch.status)) announce(`Batch ${batch.status}.`);
      }
    })();
  }
}
