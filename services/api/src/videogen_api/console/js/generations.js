// Generations: the filtered, paged list with live rows; the create form built from the API's own schema; the
// detail view with the video, timeline, progress, cancel, delete and deliveries.
import { api, ApiError, enumValues, followGeneration, openapi, resolve } from "./api.js";
import {
  announce, append, checkboxGroup, clear, field, h, localToIso, notice, select, showFieldError, statusBadge, when,
} from "./dom.js";

const TERMINAL = new Set(["completed", "failed"]);
const MAX_LIVE_ROWS = 25;

// ---------------------------------------------------------------------------------------------------- list

export async function generationList(main, { signal }) {
  const [statuses, providers] = await Promise.all([enumValues("Status"), enumValues("Provider")]);
  const statusGroup = checkboxGroup("Status", "status", statuses);
  const provider = field("Provider", select([["", "Any"], ...providers.map((p) => [p, p])], ""));
  const after = field("Created after", h("input", { type: "datetime-local", step: "1" }));
  const before = field("Created before", h("input", { type: "datetime-local", step: "1" }));
  const limit = field("Per page", select([["10", "10"], ["20", "20"], ["50", "50"], ["100", "100"]], "20"));
  const filters = h("form.filters", { "aria-label": "Filters" },
    statusGroup.fieldset, provider.wrap, after.wrap, before.wrap, limit.wrap,
    h("div.actions", {}, h("button", { type: "submit" }, "Apply filters")));
  const outcome = h("div");
  const body = h("tbody");
  const caption = h("caption", {}, "Newest first.");
  const table = h("div.table-wrap", {}, h("table", { id: "generations" }, caption,
    h("thead", {}, h("tr", {}, ["Status", "Provider", "Duration", "Prompt", "Created"].map((t) => h("th", { scope: "col" }, t)))),
    body));
  const previous = h("button.quiet", { type: "button", disabled: true }, "Previous page");
  const next = h("button.quiet", { type: "button", disabled: true }, "Next page");
  const refresh = h("button.quiet", { type: "button" }, "Refresh");
  const pager = h("nav.actions", { "aria-label": "Pages" }, previous, next, refresh);
  main.append(
    h("h1", {}, "Generations"),
    h("div.actions", {}, h("a.button", { href: "#/generations/new" }, "New generation")),
    filters, outcome, table, pager,
  );

  const cursors = [null]; // cursors[i] opens page i
  let page = 0;
  let rowsController = null;

  async function load() {
    if (rowsController) rowsController.abort();
    rowsController = new AbortController();
    signal.addEventListener("abort", () => rowsController.abort(), { once: true });
    clear(outcome);
    const query = {
      limit: limit.control.value,
      cursor: cursors[page] || undefined,
      status: statusGroup.selected().join(",") || undefined,
      provider: provider.control.value || undefined,
      created_after: localToIso(after.control.value) || undefined,
      created_before: localToIso(before.control.value) || undefined,
    };
    let answer;
    try {
      answer = await api("GET", "/generations", { query, signal });
    } catch (error) {
      if (signal.aborted) return;
      outcome.append(notice("error", describe(error)));
      return;
    }
    clear(body);
    for (const generation of answer.data) {
      const row = generationRow(generation);
      body.append(row.tr);
      if (!TERMINAL.has(generation.status) && body.childElementCount <= MAX_LIVE_ROWS) {
        followGeneration(generation.id, row.update, rowsController.signal);
      }
    }
    if (!answer.data.length) body.append(h("tr", {}, h("td", { colspan: 5 }, "No generations match.")));
    cursors[page + 1] = answer.next_cursor;
    previous.disabled = page === 0;
    next.disabled = !answer.next_cursor;
    caption.textContent = `Newest first. Page ${page + 1}.`;
    announce(`${answer.data.length} generations shown, page ${page + 1}.`);
  }

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    cursors.length = 1;
    page = 0;
    load();
  });
  next.addEventListener("click", () => { page += 1; load(); });
  previous.addEventListener("click", () => { page = Math.max(0, page - 1); load(); });
  refresh.addEventListener("click", () => load());
  await load();
}

// Why a queued generation waits, in words (a reason the console does not know is shown as it comes).
const WAITING = {
  account_concurrency: "your account's limit",
  provider_capacity: "provider capacity",
  provider: "the provider's queue",
};

function waitingFor(g) {
  const why = WAITING[g.queue_reason] || g.queue_reason;
  if (g.queue_position === null || g.queue_position === undefined) return why;
  const place = g.queue_position === 1 ? "next of yours to start" : `#${g.queue_position} of yours in line`;
  return `${why} — ${place} at ${g.provider}`;
}

function generationRow(generation) {
  const cells = {
    status: h("td"), provider: h("td"), duration: h("td"), prompt: h("td.prompt"), created: h("td"),
  };
  const tr = h("tr", { "data-id": generation.id }, Object.values(cells));
  function update(g) {
    clear(cells.status).append(statusBadge(g.status));
    if (g.status === "processing" && g.progress !== null && g.progress !== undefined) {
      cells.status.append(" ", h("span.hint", {}, `${g.progress}%`));
    }
    if (g.status === "queued" && g.queue_reason) {
      cells.status.append(" ", h("span.hint", {}, WAITING[g.queue_reason] || g.queue_reason));
    }
    cells.provider.textContent = g.provider;
    cells.duration.textContent = `${g.duration} s`;
    clear(cells.prompt).append(h("a", { href: `#/generations/${g.id}` }, g.prompt));
    clear(cells.created).append(when(g.created_at));
  }
  update(generation);
  return { tr, update };
}

// ---------------------------------------------------------------------------------------------------- create

/** A control for one property of the request schema: enums become selects, integers number inputs, long
 * strings text areas, booleans checkboxes, lists of an enum comma-separated text, an object of one enum a
 * select of it; a property that may be null or left out is optional. */
function controlFor(doc, name, schema, required) {
  let node = resolve(doc, schema);
  let optional = !required;
  if (node.anyOf) {
    const branches = node.anyOf.map((b) => resolve(doc, b)).filter((b) => b.type !== "null");
    optional = optional || branches.length < node.anyOf.length;
    // A choice of several closed lists (a provider, or "auto") is one list of them all.
    const values = branches.flatMap((b) => b.enum || (b.const !== undefined ? [b.const] : []));
    node = { ...node, ...branches[0], ...(branches.length > 1 && values.length ? { enum: values } : {}) };
  }
  const title = schema.title || name.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");
  const label = `${title}${optional ? " (optional)" : ""}`;
  const description = schema.description || node.description;
  if (node.type === "object" && node.properties && node.properties.upload_id) {
    return imageControl(name, label, description);
  }
  const props = node.type === "object" && node.properties ? Object.entries(node.properties) : [];
  if (props.length === 1) {
    // An object of one property (routing: its sort): that property's control, wrapped.
    const [inner, innerSchema] = props[0];
    const part = controlFor(doc, inner, { ...innerSchema, title: `${label.replace(" (optional)", "")}: ${inner}` }, false);
    part.control.name = name;
    const value = () => { const v = part.value(); return v === undefined ? undefined : { [inner]: v }; };
    return { ...part, name, value };
  }
  const items = node.type === "array" && node.items ? resolve(doc, node.items) : null;
  let control;
  if (items) {
    // A list of a closed list's values (fallback providers), in order: comma-separated.
    control = h("input", { type: "text", placeholder: (items.enum || []).slice(0, 2).join(", ") });
  } else if (node.type === "object") {
    // A map of strings (metadata): one KEY=VALUE per line.
    control = h("textarea", { rows: 3, placeholder: "order_id=42" });
  } else if (node.enum) {
    const options = node.enum.map((v) => [String(v), String(v)]);
    control = select(optional ? [["", "—"], ...options] : options, String(node.default ?? options[0][0]));
  } else if (node.type === "integer" || node.type === "number") {
    control = h("input", { type: "number", inputmode: "numeric", step: node.type === "integer" ? "1" : "any",
      min: node.minimum, max: node.maximum });
    if (!optional && node.minimum !== undefined) control.value = String(node.minimum);
  } else if (node.type === "boolean") {
    control = h("input", { type: "checkbox" });
  } else if (node.type === "string" && (node.maxLength === undefined || node.maxLength > 200)) {
    control = h("textarea", { rows: 3, maxlength: node.maxLength });
  } else {
    control = h("input", { type: "text", maxlength: node.maxLength, minlength: node.minLength });
  }
  control.name = name;
  if (!optional) control.required = true;
  const f = field(label, control, { hint: description, inline: node.type === "boolean" });
  function value() {
    if (node.type === "boolean") return control.checked || (optional ? undefined : false);
    const raw = control.value;
    if (raw.trim() === "") return undefined;
    if (items) return raw.split(",").map((v) => v.trim()).filter((v) => v !== "");
    if (node.type === "integer" || node.type === "number") return Number(raw);
    if (node.type === "object") {
      const pairs = raw.split("\n").filter((line) => line.trim() !== "").map((line) => {
        const at = line.indexOf("=");
        return at < 0 ? [line.trim(), ""] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
      });
      return Object.fromEntries(pairs);
    }
    return raw;
  }
  return { ...f, name, value };
}

/** The first frame: a file (uploaded with POST /v1/uploads when the form is sent) or an image's URL. */
function imageControl(name, label, description) {
  const file = h("input", { type: "file", accept: "image/png,image/jpeg,image/webp", name: `${name}-file` });
  const url = h("input", { type: "url", name: `${name}-url`, placeholder: "https://…" });
  const fileField = field(`${label}: a file`, file, { hint: description });
  const urlField = field("… or its URL", url, {});
  const wrap = h("div.image-input", {}, fileField.wrap, urlField.wrap);
  async function value({ signal }) {
    const chosen = file.files && file.files[0];
    if (chosen) {
      const form = new FormData();
      form.append("file", chosen);
      const upload = await api("POST", "/uploads", { form, signal });
      return { upload_id: upload.id };
    }
    return url.value.trim() === "" ? undefined : { url: url.value.trim() };
  }
  return { ...fileField, wrap, control: file, name, value };
}

/** US dollars, to the hundredth of a cent the API keeps. */
function usd(amount) {
  return `$${Number(amount).toFixed(amount < 1 ? 4 : 2)}`;
}

/** What the request asked of the video beyond the three required fields, as given (all of it text). */
function asked(g) {
  const rows = [];
  const add = (label, value) => rows.push(h("dt", {}, label), h("dd", {}, value));
  if (g.aspect_ratio) add("Aspect ratio", g.aspect_ratio);
  if (g.resolution) add("Resolution", g.resolution);
  if (g.seed !== null && g.seed !== undefined) add("Seed", String(g.seed));
  if (g.negative_prompt) add("Negative prompt", g.negative_prompt);
  if (g.image) add("First frame", g.image.url || `upload ${g.image.upload_id}`);
  for (const [key, value] of Object.entries(g.metadata || {})) add(`Metadata: ${key}`, value);
  return rows;
}

/** A model's prices, per second of video by resolution: "720p $0.142/s, 1080p $0.318/s". */
function priceOf(model) {
  return model.prices.map((p) => `${p.resolution ?? "any"} $${p.usd_per_second}/s`).join(", ");
}

/** The form's model field as a picker of the chosen provider's models (GET /v1/models), each with its price:
 * re-filled whenever the provider changes; with "auto", every model, named with its provider. */
async function modelPicker(fields, signal) {
  const modelField = fields.find((f) => f.name === "model");
  const providerField = fields.find((f) => f.name === "provider");
  if (!modelField || !providerField) return;
  const { data: models } = await api("GET", "/models", { signal });
  const picker = h("select", { id: modelField.control.id, name: "model" });
  picker.setAttribute("aria-describedby", modelField.control.getAttribute("aria-describedby"));
  modelField.control.replaceWith(picker);
  function refill() {
    const provider = providerField.control.value;
    const shown = models.filter((m) => m.enabled && (provider === "auto" || m.provider === provider));
    const options = [["", "The provider's default model"]];
    for (const m of shown) {
      const name = provider === "auto" ? `${m.provider}: ${m.id}` : m.id;
      options.push([m.id, `${name}${m.default ? " (default)" : ""} — ${priceOf(m)}`]);
    }
    clear(picker).append(...options.map(([v, label]) => h("option", { value: v }, label)));
  }
  refill();
  providerField.control.addEventListener("change", refill);
  modelField.control = picker;
  modelField.value = () => picker.value || undefined;
}

export async function newGeneration(main, { signal }) {
  const doc = await openapi();
  const request = doc.paths["/v1/generate"].post.requestBody.content["application/json"].schema;
  const schema = resolve(doc, request);
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties).map(([name, prop]) => controlFor(doc, name, prop, required.has(name)));
  await modelPicker(fields, signal);
  const outcome = h("div");
  const submit = h("button", { type: "submit" }, "Generate");
  const form = h("form", { novalidate: true, id: "new-generation" }, fields.map((f) => f.wrap), h("div.actions", {}, submit), outcome);
  // One idempotency key per filled-in form: a double submit or a retry after a lost answer makes one generation.
  let idempotencyKey = crypto.randomUUID();
  form.addEventListener("input", () => { idempotencyKey = crypto.randomUUID(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    fields.forEach((f) => showFieldError(f, ""));
    const body = {};
    submit.disabled = true;
    try {
      for (const f of fields) {
        const v = await f.value({ signal });
        if (v !== undefined) body[f.name] = v;
      }
      const generation = await api("POST", "/generate", { body, headers: { "Idempotency-Key": idempotencyKey }, signal });
      announce("Generation requested.");
      window.location.hash = `#/generations/${generation.id}`;
    } catch (error) {
      if (signal.aborted) return;
      let focused = false;
      for (const fe of error instanceof ApiError ? error.fieldErrors : []) {
        const f = fields.find((x) => x.name === fe.field.replace(/^body\./, "").split(".")[0]);
        if (!f) continue;
        showFieldError(f, fe.message);
        if (!focused) { f.control.focus(); focused = true; }
      }
      outcome.append(notice("error", describe(error)));
    } finally {
      submit.disabled = false;
    }
  });
  main.append(
    h("h1", {}, "New generation"),
    h("p.hint", {}, "The fields come from the API's own schema (GenerateRequest in /openapi.json)."),
    form,
  );
}

// ---------------------------------------------------------------------------------------------------- detail

export async function generationDetail(main, { signal, params: [id] }) {
  let generation;
  try {
    generation = await api("GET", `/generations/${id}`, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      main.append(h("h1", {}, "Generation not found"), notice("error", `No generation ${id} in this account.`));
      return;
    }
    throw error;
  }
  const facts = h("dl.facts", { id: "generation-facts" });
  const progressSlot = h("div", { id: "progress" });
  const mediaSlot = h("div.media", { id: "media" });
  const errorSlot = h("div", { id: "generation-error" });
  const timeline = h("ol.timeline", { id: "timeline" });
  const actions = h("div.actions");
  const outcome = h("div");
  const deliveries = h("div", { id: "generation-deliveries" });
  const attempts = h("div", { id: "attempts" });
  const cancel = h("button.danger", { type: "button" }, "Cancel generation");
  const remove = h("button.danger", { type: "button" }, "Delete generation");
  const confirmSlot = h("div");
  actions.append(cancel, remove);
  main.append(
    h("h1", {}, "Generation ", h("code", {}, id)),
    facts, progressSlot, errorSlot, mediaSlot, actions, confirmSlot, outcome, attempts,
    h("h2", {}, "Timeline"), timeline,
    h("h2", {}, "Deliveries"), deliveries,
  );
  let shownMedia = null;
  function render(g) {
    append(clear(facts), [
      h("dt", {}, "Status"), h("dd", { id: "generation-status" }, statusBadge(g.status)),
      g.deleted ? [h("dt", {}, "Deleted"), h("dd", { id: "generation-deleted" }, when(g.deleted_at))] : null,
      h("dt", {}, "Prompt"),
      h("dd", { id: "generation-prompt" }, g.deleted ? h("span.hint", {}, "erased") : g.prompt),
      h("dt", {}, "Provider"), h("dd", {}, g.provider),
      g.model ? [h("dt", {}, "Model"), h("dd", { id: "generation-model" }, g.model)] : null,
      h("dt", {}, "Duration"), h("dd", {}, `${g.duration} s`),
      h("dt", {}, "Created"), h("dd", {}, when(g.created_at)),
      h("dt", {}, "Updated"), h("dd", {}, when(g.updated_at)),
      g.status === "queued" && g.queue_reason
        ? [h("dt", {}, "Waiting for"), h("dd", { id: "generation-waiting" }, waitingFor(g))] : null,
      g.priority && g.priority !== "normal" ? [h("dt", {}, "Priority"), h("dd", {}, g.priority)] : null,
      g.route ? [h("dt", {}, "Route"), h("dd", { id: "generation-route" }, g.route.reason || "")] : null,
      g.estimated_cost !== null && g.estimated_cost !== undefined
        ? [h("dt", {}, "Estimated cost"), h("dd", {}, usd(g.estimated_cost))] : null,
      g.cost !== null && g.cost !== undefined ? [h("dt", {}, "Cost"), h("dd", { id: "generation-cost" }, usd(g.cost))] : null,
      asked(g),
    ]);
    clear(attempts);
    if (g.attempts && g.attempts.length) {
      attempts.append(h("h2", {}, "Attempts"), h("table", { id: "generation-attempts" },
        h("thead", {}, h("tr", {}, ["Provider", "Started", "Ended", "Outcome", "Cost"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, g.attempts.map((a) => h("tr", {},
          h("td", {}, a.provider), h("td", {}, when(a.started_at)), h("td", {}, a.ended_at ? when(a.ended_at) : "—"),
          h("td", {}, a.error_code ? h("code", {}, a.error_code) : a.ended_at ? "made the video" : "under way"),
          h("td", {}, a.cost === null || a.cost === undefined ? "—" : usd(a.cost)))))));
    }
    clear(progressSlot);
    if (!TERMINAL.has(g.status)) {
      const bar = h("progress", { max: 100, id: "generation-progress", "aria-labelledby": "progress-label" });
      if (g.progress !== null && g.progress !== undefined) bar.value = g.progress;
      progressSlot.append(h("p", { id: "progress-label" },
        g.progress === null || g.progress === undefined ? "Progress (the provider does not say)" : `Progress: ${g.progress}%`), bar);
    }
    clear(errorSlot);
    if (g.error) {
      errorSlot.append(notice("error",
        h("strong", {}, "Failed: "), h("code", { id: "error-code" }, g.error.code), " — ",
        h("span", { id: "error-message" }, g.error.message),
        g.error.provider_code ? ` (provider code ${g.error.provider_code})` : "",
        g.error.retriable ? " Retrying the same request may succeed." : ""));
    }
    if (g.video_url && shownMedia !== g.video_url) {
      shownMedia = g.video_url;
      const video = h("video", {
        id: "video", controls: true, muted: true, playsinline: true, preload: "auto", src: g.video_url,
        poster: g.thumbnail_url || undefined, "aria-label": "The generated video",
      });
      video.muted = true;
      append(clear(mediaSlot), [
        h("figure", {}, video, h("figcaption.hint", {}, h("a", { href: g.video_url, download: `${g.id}.mp4` }, "Download the video"))),
        g.thumbnail_url ? h("figure", {}, h("img.thumb", { id: "thumbnail", src: g.thumbnail_url, alt: "Thumbnail of the video" }),
          h("figcaption.hint", {}, "Thumbnail")) : null,
      ]);
    }
    if (g.deleted) {
      shownMedia = null;
      clear(mediaSlot).append(notice("ok", "Deleted: its video, thumbnail, prompt and metadata are gone. "
        + "It still counts in usage."));
    }
    clear(timeline).append(...g.timeline.map((step) => h("li", {}, statusBadge(step.status), " ", when(step.at))));
    cancel.hidden = TERMINAL.has(g.status) || g.deleted;
    remove.hidden = g.deleted;
  }
  render(generation);
  cancel.addEventListener("click", async () => {
    clear(outcome);
    cancel.disabled = true;
    try {
      render(await api("POST", `/generations/${id}/cancel`, { signal }));
      outcome.append(notice("ok", "Canceled."));
    } catch (error) {
      if (!signal.aborted) outcome.append(notice("error", describe(error)));
    } finally {
      cancel.disabled = false;
    }
  });
  remove.addEventListener("click", () => {
    const yes = h("button.danger", { type: "button" }, "Yes, delete it");
    const no = h("button.quiet", { type: "button" }, "Keep it");
    clear(confirmSlot).append(h("div.notice", { role: "group", "aria-label": "Confirm deletion" },
      h("p", {}, TERMINAL.has(generation.status)
        ? "Delete this generation for good? Its video, thumbnail, prompt and metadata are deleted, and its links stop working."
        : "Cancel and delete this generation for good? Its prompt and metadata are deleted; it makes no video."),
      h("div.actions", {}, yes, no)));
    no.addEventListener("click", () => { clear(confirmSlot); remove.focus(); });
    yes.addEventListener("click", async () => {
      clear(outcome);
      yes.disabled = true;
      try {
        await api("DELETE", `/generations/${id}`, { signal });
        generation = await api("GET", `/generations/${id}`, { signal });
        clear(confirmSlot);
        render(generation);
        announce("Generation deleted.");
        main.querySelector("h1").focus();
      } catch (error) {
        yes.disabled = false;
        if (!signal.aborted) outcome.append(notice("error", describe(error)));
      }
    });
    no.focus();
  });
  const showDeliveries = () => generationDeliveries(generation, deliveries, signal);
  if (!TERMINAL.has(generation.status)) {
    followGeneration(id, (g) => {
      if (generation.deleted) return; // what the stream still brings is older than the tombstone
      const wasRunning = !TERMINAL.has(generation.status);
      generation = g;
      render(g);
      if (wasRunning && TERMINAL.has(g.status)) {
        announce(`Generation ${g.status}.`);
        showDeliveries();
      }
    }, signal);
  }
  await showDeliveries();
}

/** The generation's deliveries: there is no per-generation listing in the API, so each endpoint's deliveries
 * made since the generation was created are read (up to three pages each) and those of this generation kept. */
async function generationDeliveries(generation, slot, signal) {
  const found = [];
  try {
    const { data: hooks } = await api("GET", "/webhooks", { signal });
    const since = new Date(Date.parse(generation.created_at) - 1000).toISOString();
    await Promise.all(hooks.map(async (hook) => {
      let cursor;
      for (let pageNo = 0; pageNo < 3; pageNo += 1) {
        const page = await api("GET", `/webhooks/${hook.id}/deliveries`, {
          query: { created_after: since, limit: 100, cursor }, signal,
        });
        for (const d of page.data) if (d.generation_id === generation.id) found.push({ hook, d });
        cursor = page.next_cursor;
        if (!cursor) break;
      }
    }));
  } catch (error) {
    if (!signal.aborted) clear(slot).append(notice("error", describe(error)));
    return;
  }
  if (!found.length) {
    clear(slot).append(h("p", {}, TERMINAL.has(generation.status)
      ? "No webhook deliveries for this generation."
      : "None yet: completed and failed events are delivered when it finishes."));
    return;
  }
  clear(slot).append(h("div.table-wrap", {}, h("table", {},
    h("thead", {}, h("tr", {}, ["Delivery", "Endpoint", "Event", "Status", "Attempts"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, found.map(({ hook, d }) => h("tr", {},
      h("td", {}, h("a", { href: `#/deliveries/${d.id}` }, h("code", {}, d.id))),
      h("td", {}, h("a", { href: `#/webhooks/${hook.id}` }, hook.url)),
      h("td", {}, d.event_type),
      h("td", {}, statusBadge(d.status)),
      h("td", {}, String(d.attempts.length))))))));
}

export function describe(error) {
  if (error instanceof ApiError) {
    const fieldText = error.fieldErrors.map((e) => `${e.field}: ${e.message}`).join("; ");
    return `${error.problem.title || "Error"} (${error.status})${error.message && error.message !== error.problem.title ? `: ${error.message}` : ""}${fieldText ? ` — ${fieldText}` : ""}`;
  }
  return error.message || String(error);
}
