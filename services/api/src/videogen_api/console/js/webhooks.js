// Webhooks: endpoints with their health, creation (the secret shown once), editing, enabling and disabling,
// secret rotation, test events, deletion; each endpoint's deliveries with every attempt, retry and recovery; an event.
import { api, ApiError, enumValues } from "./api.js";
import {
  announce, checkboxGroup, clear, field, h, localToIso, notice, secretPanel, select, showFieldError, statusBadge, when,
} from "./dom.js";
import { describe } from "./generations.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const POLL_MS = 1500;
const SIGNS = "It signs every delivery to this endpoint.";

function health(hook) {
  return hook.active
    ? h("span.status.health-active", {}, "Active")
    : h("span.status.health-disabled", {}, "Disabled", hook.disabled_reason ? `: ${hook.disabled_reason}` : "");
}

// ---------------------------------------------------------------------------------------------------- list

export async function webhookList(main, { signal }) {
  const events = await enumValues("EventType");
  const url = field("URL", h("input", { type: "url", required: true, placeholder: "https://example.com/hooks/videogen", autocomplete: "off" }),
    { hint: "Where the signed POSTs go." });
  const eventGroup = checkboxGroup("Events", "events", events, ["video.completed", "video.failed"].filter((e) => events.includes(e)));
  const outcome = h("div", { id: "create-outcome" });
  const form = h("form", { novalidate: true, id: "new-webhook" }, url.wrap, eventGroup.fieldset,
    h("div.actions", {}, h("button", { type: "submit" }, "Add endpoint")), outcome);
  const listSlot = h("div", { id: "webhooks" });
  main.append(h("h1", {}, "Webhooks"), h("h2", {}, "Endpoints"), listSlot, h("h2", {}, "Add an endpoint"), form);

  async function load() {
    let hooks;
    try {
      ({ data: hooks } = await api("GET", "/webhooks", { signal }));
    } catch (error) {
      if (!signal.aborted) clear(listSlot).append(notice("error", describe(error)));
      return;
    }
    if (!hooks.length) {
      clear(listSlot).append(h("p", {}, "No endpoints yet."));
      return;
    }
    const since = new Date(Date.now() - DAY_MS).toISOString();
    const failures = await Promise.all(hooks.map((hook) => api("GET", `/webhooks/${hook.id}/deliveries`, {
      query: { status: "failed", created_after: since, limit: 100 }, signal,
    }).then((p) => `${p.data.length}${p.next_cursor ? "+" : ""}`, () => "?")));
    clear(listSlot).append(h("div.table-wrap", {}, h("table", {},
      h("caption", {}, "Failed deliveries are counted over the last 24 hours."),
      h("thead", {}, h("tr", {}, ["Endpoint", "Events", "Health", "Failed (24 h)", "Created"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, hooks.map((hook, i) => h("tr", { "data-id": hook.id },
        h("td.prompt", {}, h("a", { href: `#/webhooks/${hook.id}` }, hook.url)),
        h("td", {}, hook.events.join(", ")),
        h("td", {}, health(hook)),
        h("td", {}, failures[i]),
        h("td", {}, when(hook.created_at))))))));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    showFieldError(url, "");
    try {
      const created = await api("POST", "/webhooks", { body: { url: url.control.value.trim(), events: eventGroup.selected() }, signal });
      outcome.append(secretPanel("Endpoint added. Its signing secret:", created.secret, SIGNS),
        h("p", {}, h("a", { href: `#/webhooks/${created.id}` }, "Open the endpoint")));
      form.reset();
      announce("Endpoint added. Its secret is shown once.");
      await load();
    } catch (error) {
      if (signal.aborted) return;
      for (const fe of error instanceof ApiError ? error.fieldErrors : []) {
        if (fe.field.replace(/^body\./, "") === "url") showFieldError(url, fe.message);
      }
      outcome.append(notice("error", describe(error)));
    }
  });
  await load();
}

// ---------------------------------------------------------------------------------------------------- one endpoint

export async function webhookDetail(main, { signal, params: [id] }) {
  let hook;
  try {
    hook = await api("GET", `/webhooks/${id}`, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      main.append(h("h1", {}, "Endpoint not found"), notice("error", `No endpoint ${id} in this account.`));
      return;
    }
    throw error;
  }
  const events = await enumValues("EventType");
  const facts = h("dl.facts", { id: "webhook-facts" });
  const outcome = h("div", { id: "webhook-outcome" });
  const eventGroup = checkboxGroup("Events", "events", events, hook.events);
  const eventsForm = h("form", { novalidate: true, id: "edit-events" }, eventGroup.fieldset,
    h("div.actions", {}, h("button", { type: "submit" }, "Save events")));
  const toggle = h("button.quiet", { type: "button", id: "toggle-active" });
  const rotate = h("button.quiet", { type: "button" }, "Rotate secret");
  const test = h("button.quiet", { type: "button" }, "Send test event");
  const remove = h("button.danger", { type: "button" }, "Delete endpoint");
  const confirmSlot = h("div");
  const deliveriesSlot = h("div", { id: "deliveries" });
  main.append(
    h("h1", {}, "Endpoint ", h("code", {}, id)),
    facts,
    h("div.actions", {}, toggle, rotate, test, remove),
    confirmSlot, outcome,
    h("h2", {}, "Events"), eventsForm,
    h("h2", {}, "Deliveries"), deliveriesSlot,
  );

  function render(current) {
    hook = current;
    clear(facts).append(
      h("dt", {}, "URL"), h("dd", { id: "webhook-url" }, current.url),
      h("dt", {}, "Health"), h("dd", { id: "webhook-health" }, health(current)),
      h("dt", {}, "Events"), h("dd", {}, current.events.join(", ")),
      h("dt", {}, "Created"), h("dd", {}, when(current.created_at)),
      h("dt", {}, "Updated"), h("dd", {}, when(current.updated_at)),
    );
    toggle.textContent = current.active ? "Disable endpoint" : "Enable endpoint";
    eventGroup.set(current.events);
  }
  render(hook);

  async function act(button, work) {
    clear(outcome);
    button.disabled = true;
    try {
      await work();
    } catch (error) {
      if (!signal.aborted) outcome.append(notice("error", describe(error)));
    } finally {
      button.disabled = false;
    }
  }

  eventsForm.addEventListener("submit", (event) => {
    event.preventDefault();
    act(eventsForm.querySelector("button"), async () => {
      render(await api("PATCH", `/webhooks/${id}`, { body: { events: eventGroup.selected() }, signal }));
      outcome.append(notice("ok", "Events saved."));
    });
  });
  toggle.addEventListener("click", () => act(toggle, async () => {
    render(await api("PATCH", `/webhooks/${id}`, { body: { active: !hook.active }, signal }));
    outcome.append(notice("ok", hook.active ? "Endpoint enabled." : "Endpoint disabled."));
  }));
  rotate.addEventListener("click", () => act(rotate, async () => {
    const rotated = await api("POST", `/webhooks/${id}/rotate-secret`, { signal });
    outcome.append(secretPanel("Secret rotated. The new signing secret:", rotated.secret, SIGNS),
      h("p.hint", {}, "The previous secret keeps signing beside the new one for a while (24 h by default)."));
    announce("Secret rotated. The new secret is shown once.");
  }));
  test.addEventListener("click", () => act(test, async () => {
    await api("POST", `/webhooks/${id}/test`, { signal });
    outcome.append(notice("ok", "Test event queued."));
    await deliveries.reload();
  }));
  remove.addEventListener("click", () => {
    const yes = h("button.danger", { type: "button" }, "Yes, delete it");
    const no = h("button.quiet", { type: "button" }, "Keep it");
    clear(confirmSlot).append(h("div.notice", { role: "group", "aria-label": "Confirm deletion" },
      h("p", {}, "Delete this endpoint? Its pending deliveries fail."), h("div.actions", {}, yes, no)));
    no.addEventListener("click", () => { clear(confirmSlot); remove.focus(); });
    yes.addEventListener("click", () => act(yes, async () => {
      await api("DELETE", `/webhooks/${id}`, { signal });
      announce("Endpoint deleted.");
      window.location.hash = "#/webhooks";
    }));
    no.focus();
  });

  const deliveries = deliveryList(deliveriesSlot, id, signal);
  await deliveries.reload();
}

function attemptList(attempts) {
  if (!attempts.length) return h("span.hint", {}, "none yet");
  return h("ul.attempts", {}, attempts.map((a) => h("li", {},
    when(a.at), " · ", a.status_code === null ? "no answer" : String(a.status_code),
    " · ", a.latency_ms === null ? "—" : `${Math.round(a.latency_ms)} ms`,
    a.error ? ` · ${a.error}` : "")));
}

function deliveryList(slot, hookId, signal) {
  const status = field("Status", select([["", "Any"], ["pending", "pending"], ["succeeded", "succeeded"], ["failed", "failed"]], ""));
  const filters = h("form.filters", { "aria-label": "Delivery filters" }, status.wrap,
    h("div.actions", {}, h("button", { type: "submit" }, "Apply")));
  const since = field("Failed since", h("input", { type: "datetime-local", step: "1", required: true }),
    { hint: "Re-sends every failed delivery created since then (at most 14 days back)." });
  since.control.value = toLocalInput(new Date(Date.now() - DAY_MS));
  const recoverForm = h("form.filters", { novalidate: true, "aria-label": "Recover failed deliveries" }, since.wrap,
    h("div.actions", {}, h("button", { type: "submit" }, "Recover failed deliveries")));
  const outcome = h("div", { id: "deliveries-outcome" });
  const body = h("tbody");
  const next = h("button.quiet", { type: "button", disabled: true }, "Next page");
  const first = h("button.quiet", { type: "button", disabled: true }, "First page");
  const refresh = h("button.quiet", { type: "button" }, "Refresh");
  slot.append(filters, recoverForm, outcome,
    h("div.table-wrap", {}, h("table", { id: "deliveries-table" },
      h("caption", {}, "Newest first; pending ones refresh by themselves."),
      h("thead", {}, h("tr", {}, ["Delivery", "Event", "Status", "Attempts (time · status · latency · error)", "Next attempt", ""]
        .map((t) => h("th", { scope: "col" }, t)))),
      body)),
    h("nav.actions", { "aria-label": "Delivery pages" }, first, next, refresh));
  let cursor = null;
  let nextCursor = null;
  let timer = null;
  signal.addEventListener("abort", () => window.clearTimeout(timer), { once: true });

  async function reload() {
    window.clearTimeout(timer);
    let page;
    try {
      page = await api("GET", `/webhooks/${hookId}/deliveries`, {
        query: { status: status.control.value || undefined, cursor: cursor || undefined, limit: 20 }, signal,
      });
    } catch (error) {
      if (!signal.aborted) clear(outcome).append(notice("error", describe(error)));
      return;
    }
    clear(body);
    for (const d of page.data) {
      const retry = d.status === "pending" ? null : h("button.quiet", { type: "button", "aria-label": `Retry delivery ${d.id}` }, "Retry");
      if (retry) {
        retry.addEventListener("click", async () => {
          clear(outcome);
          retry.disabled = true;
          try {
            await api("POST", `/deliveries/${d.id}/retry`, { signal });
            outcome.append(notice("ok", `Delivery ${d.id} queued again.`));
            await reload();
          } catch (error) {
            if (!signal.aborted) outcome.append(notice("error", describe(error)));
            retry.disabled = false;
          }
        });
      }
      body.append(h("tr", { "data-id": d.id, "data-status": d.status },
        h("td", {}, h("a", { href: `#/deliveries/${d.id}` }, h("code", {}, d.id)), h("br"), when(d.created_at)),
        h("td", {}, h("a", { href: `#/events/${d.event_id}` }, d.event_type), d.generation_id ? [h("br"), h("a", { href: `#/generations/${d.generation_id}` }, h("code", {}, d.generation_id))] : null),
        h("td", {}, statusBadge(d.status), d.failure_reason ? [h("br"), h("span.hint", {}, d.failure_reason)] : null),
        h("td", {}, attemptList(d.attempts)),
        h("td", {}, d.next_attempt_at ? when(d.next_attempt_at) : "—"),
        h("td", {}, retry)));
    }
    if (!page.data.length) body.append(h("tr", {}, h("td", { colspan: 6 }, "No deliveries match.")));
    nextCursor = page.next_cursor;
    next.disabled = !nextCursor;
    first.disabled = !cursor;
    if (page.data.some((d) => d.status === "pending")) timer = window.setTimeout(reload, POLL_MS);
  }

  filters.addEventListener("submit", (event) => { event.preventDefault(); cursor = null; clear(outcome); reload(); });
  next.addEventListener("click", () => { cursor = nextCursor; reload(); });
  first.addEventListener("click", () => { cursor = null; reload(); });
  refresh.addEventListener("click", () => reload());
  recoverForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    const iso = localToIso(since.control.value);
    if (!iso) {
      showFieldError(since, "Enter a date and time.");
      return;
    }
    showFieldError(since, "");
    try {
      const answer = await api("POST", `/webhooks/${hookId}/recover`, { body: { since: iso }, signal });
      outcome.append(notice("ok", `${answer.requeued} failed ${answer.requeued === 1 ? "delivery" : "deliveries"} queued again.`));
      await reload();
    } catch (error) {
      if (!signal.aborted) outcome.append(notice("error", describe(error)));
    }
  });
  return { reload };
}

function toLocalInput(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

// ---------------------------------------------------------------------------------------------------- one delivery

export async function deliveryDetail(main, { signal, params: [id] }) {
  const slot = h("div");
  const outcome = h("div");
  main.append(h("h1", {}, "Delivery ", h("code", {}, id)), slot, outcome);
  async function load() {
    let d;
    try {
      d = await api("GET", `/deliveries/${id}`, { signal });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        clear(slot).append(notice("error", `No delivery ${id} in this account.`));
        return;
      }
      throw error;
    }
    const retry = h("button", { type: "button", disabled: d.status === "pending" }, "Retry now");
    retry.addEventListener("click", async () => {
      clear(outcome);
      try {
        await api("POST", `/deliveries/${id}/retry`, { signal });
        outcome.append(notice("ok", "Queued again."));
        await load();
      } catch (error) {
        if (!signal.aborted) outcome.append(notice("error", describe(error)));
      }
    });
    clear(slot).append(
      h("dl.facts", {},
        h("dt", {}, "Endpoint"), h("dd", {}, h("a", { href: `#/webhooks/${d.webhook_id}` }, h("code", {}, d.webhook_id))),
        h("dt", {}, "Event"), h("dd", {}, d.event_type, " ", h("a", { href: `#/events/${d.event_id}` }, h("code", {}, d.event_id))),
        d.generation_id ? [h("dt", {}, "Generation"), h("dd", {}, h("a", { href: `#/generations/${d.generation_id}` }, h("code", {}, d.generation_id)))] : null,
        h("dt", {}, "Status"), h("dd", {}, statusBadge(d.status)),
        d.failure_reason ? [h("dt", {}, "Why it failed"), h("dd", {}, d.failure_reason)] : null,
        h("dt", {}, "Next attempt"), h("dd", {}, d.next_attempt_at ? when(d.next_attempt_at) : "—"),
        h("dt", {}, "Created"), h("dd", {}, when(d.created_at))),
      h("h2", {}, "Attempts"),
      d.attempts.length
        ? h("div.table-wrap", {}, h("table", { id: "attempts" },
          h("thead", {}, h("tr", {}, ["Time", "Status code", "Latency", "Error"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, d.attempts.map((a) => h("tr", {},
            h("td", {}, when(a.at)),
            h("td", {}, a.status_code === null ? "no answer" : String(a.status_code)),
            h("td", {}, a.latency_ms === null ? "—" : `${Math.round(a.latency_ms)} ms`),
            h("td", {}, a.error || "—"))))))
        : h("p", {}, "No attempt yet."),
      h("div.actions", {}, retry));
  }
  await load();
}

// ---------------------------------------------------------------------------------------------------- one event

const SUBJECT_PAGES = { generation: "generations", webhook: "webhooks" };

export async function eventDetail(main, { signal, params: [id] }) {
  const slot = h("div");
  main.append(h("h1", {}, "Event ", h("code", {}, id)), slot);
  let e;
  try {
    e = await api("GET", `/events/${id}`, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      slot.append(notice("error", `No event ${id} in this account.`));
      return;
    }
    throw error;
  }
  const page = SUBJECT_PAGES[e.subject.type];
  const subject = h("code", {}, e.subject.id);
  slot.append(
    h("dl.facts", {},
      h("dt", {}, "Type"), h("dd", {}, e.type),
      h("dt", {}, "About"), h("dd", {}, `${e.subject.type} `, page ? h("a", { href: `#/${page}/${e.subject.id}` }, subject) : subject),
      h("dt", {}, "Happened"), h("dd", {}, when(e.created_at))),
    h("h2", {}, "Data, as delivered"),
    h("pre", { id: "event-data" }, JSON.stringify(e.data, null, 2)));
}
