// The audit trail: every change to the account's keys, budgets and webhooks, and each budget threshold reached,
// newest first, filtered by type, page after page.
import { api, enumValues } from "./api.js";
import { clear, field, h, notice, select, when } from "./dom.js";
import { describe } from "./generations.js";

function actorText(actor) {
  if (actor.type === "api_key") return `API key ${actor.id}`;
  if (actor.type === "operator") return "an operator (command line)";
  return `the system (${actor.id})`;
}

/** What changed, as short text: each field's from → to, or the event's own data. */
function dataText(data) {
  if (data.changes) {
    return Object.entries(data.changes)
      .map(([name, change]) => `${name}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`).join("; ");
  }
  return Object.entries(data).map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join("; ");
}

export async function auditPage(main, { signal }) {
  const types = await enumValues("AuditEventType");
  const type = field("Type", select([["", "Any"], ...types.map((t) => [t, t])], ""));
  const filters = h("form.filters", { "aria-label": "Audit filters" }, type.wrap,
    h("div.actions", {}, h("button", { type: "submit" }, "Apply")));
  const outcome = h("div");
  const body = h("tbody");
  const next = h("button.quiet", { type: "button", disabled: true }, "Next page");
  const first = h("button.quiet", { type: "button", disabled: true }, "First page");
  main.append(h("h1", {}, "Audit trail"), filters, outcome,
    h("div.table-wrap", {}, h("table", { id: "audit-table" },
      h("caption", {}, "Newest first. Never a secret."),
      h("thead", {}, h("tr", {}, ["When", "Type", "By", "Target", "What"].map((t) => h("th", { scope: "col" }, t)))),
      body)),
    h("nav.actions", { "aria-label": "Audit pages" }, first, next));
  let cursor = null;
  let nextCursor = null;

  let latest = 0; // a slower, older load never overwrites a newer one
  async function load() {
    const mine = ++latest;
    clear(outcome);
    let page;
    try {
      page = await api("GET", "/audit-events", {
        query: { type: type.control.value || undefined, cursor: cursor || undefined, limit: 50 }, signal,
      });
    } catch (error) {
      if (!signal.aborted && mine === latest) outcome.append(notice("error", describe(error)));
      return;
    }
    if (mine !== latest) return;
    clear(body).append(...page.data.map((e) => h("tr", { "data-id": e.id, "data-type": e.type },
      h("td", {}, when(e.created_at)),
      h("td", {}, h("code", {}, e.type)),
      h("td", {}, actorText(e.actor)),
      h("td", {}, `${e.target.type} `, h("code", {}, e.target.id)),
      h("td.prompt", {}, dataText(e.data)))));
    if (!page.data.length) body.append(h("tr", {}, h("td", { colspan: 5 }, "Nothing matches.")));
    nextCursor = page.next_cursor;
    next.disabled = !nextCursor;
    first.disabled = !cursor;
  }

  filters.addEventListener("submit", (event) => { event.preventDefault(); cursor = null; load(); });
  next.addEventListener("click", () => { cursor = nextCursor; load(); });
  first.addEventListener("click", () => { cursor = null; load(); });
  await load();
}
