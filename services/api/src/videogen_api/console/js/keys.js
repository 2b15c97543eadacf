// API keys: the account's keys (never their secrets: a prefix and the last four characters), a form to make
// one with scopes, an expiry and budgets of its own (the secret shown once, with a copy button), and revoking.
import { api, ApiError, enumValues } from "./api.js";
import {
  announce, checkboxGroup, clear, field, h, localToIso, notice, secretPanel, showFieldError, when,
} from "./dom.js";
import { describe } from "./generations.js";
import { BUDGETS, budgetAmount, budgetInput } from "./usage.js";

function keyStatus(key) {
  if (key.revoked_at) return h("span.status.health-disabled", {}, "Revoked");
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return h("span.status.health-disabled", {}, "Expired");
  return h("span.status.health-active", {}, "Active");
}

function budgetText(budgets) {
  const set = BUDGETS.filter(({ name }) => budgets[name] !== null && budgets[name] !== undefined)
    .map(({ name, label }) => `${label.toLowerCase()}: ${budgetAmount(name, budgets[name])}`);
  return set.length ? set.join("; ") : "none";
}

export async function keyList(main, { signal }) {
  const scopes = await enumValues("Scope");
  const name = field("Name", h("input", { type: "text", required: true, maxlength: 100, autocomplete: "off" }),
    { hint: "Yours, to tell the key by: what or who will use it." });
  const scopeGroup = checkboxGroup("Scopes", "scopes", scopes);
  const scopeHint = h("p.hint", {}, "What the key may do; each :write also reads. A key can give no scope it does not hold.");
  const scopeError = h("p.field-error", { hidden: true, id: "scopes-error" });
  scopeGroup.fieldset.append(scopeHint, scopeError);
  const expires = field("Expires (optional)", h("input", { type: "datetime-local", step: "1" }),
    { hint: "Leave empty for a key that never expires." });
  const budgetFields = Object.fromEntries(BUDGETS.map((budget) => [budget.name, field(`${budget.label} (optional)`,
    budgetInput(budget), { hint: "Its own budget, on top of the account's; empty for none." })]));
  const outcome = h("div", { id: "create-key-outcome" });
  const form = h("form", { novalidate: true, id: "new-key" }, name.wrap, scopeGroup.fieldset, expires.wrap,
    Object.values(budgetFields).map((f) => f.wrap),
    h("div.actions", {}, h("button", { type: "submit" }, "Make key")), outcome);
  const listOutcome = h("div", { id: "keys-outcome" });
  const listSlot = h("div", { id: "keys" });
  const next = h("button.quiet", { type: "button", disabled: true }, "Next page");
  const first = h("button.quiet", { type: "button", disabled: true }, "First page");
  main.append(h("h1", {}, "API keys"), h("h2", {}, "Keys"), listOutcome, listSlot,
    h("nav.actions", { "aria-label": "Key pages" }, first, next), h("h2", {}, "Make a key"), form);

  let cursor = null;
  let nextCursor = null;

  function revokeButton(key) {
    const button = h("button.danger", { type: "button", "aria-label": `Revoke ${key.name || key.id}` }, "Revoke");
    button.addEventListener("click", () => {
      const cell = button.parentElement;
      const yes = h("button.danger", { type: "button" }, "Yes, revoke it");
      const no = h("button.quiet", { type: "button" }, "Keep it");
      const ask = h("div", { role: "group", "aria-label": `Confirm revoking ${key.name || key.id}` },
        h("p", {}, "It stops working within seconds, everywhere."), h("div.actions", {}, yes, no));
      cell.replaceChildren(ask);
      no.addEventListener("click", () => { cell.replaceChildren(button); button.focus(); });
      yes.addEventListener("click", async () => {
        yes.disabled = true;
        clear(listOutcome);
        try {
          const revoked = await api("DELETE", `/api-keys/${key.id}`, { signal });
          listOutcome.append(notice("ok", `Key ${revoked.name || revoked.id} revoked.`));
          announce("Key revoked.");
          await load();
        } catch (error) {
          if (signal.aborted) return;
          listOutcome.append(notice("error", describe(error)));
          cell.replaceChildren(button);
        }
      });
      no.focus();
    });
    return button;
  }

  let latest = 0; // a slower, older load never overwrites a newer one
  async function load() {
    const mine = ++latest;
    let page;
    try {
      page = await api("GET", "/api-keys", { query: { limit: 50, cursor: cursor || undefined }, signal });
    } catch (error) {
      if (!signal.aborted && mine === latest) clear(listSlot).append(notice("error", describe(error)));
      return;
    }
    if (mine !== latest) return;
    clear(listSlot).append(h("div.table-wrap", {}, h("table", { id: "keys-table" },
      h("caption", {}, "Newest first. A key's secret is never shown again: only how it begins and ends."),
      h("thead", {}, h("tr", {}, ["Name", "Key", "Scopes", "Own budgets", "Created", "Last used", "Expires", "Status", ""]
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, page.data.map((key) => h("tr", { "data-id": key.id },
        h("td", {}, key.name || "—", h("br"), h("code", {}, key.id)),
        h("td", {}, h("code", {}, `${key.prefix}…${key.last_four || "????"}`)),
        h("td", {}, key.scopes.join(", ")),
        h("td", {}, budgetText(key.budgets)),
        h("td", {}, when(key.created_at)),
        h("td", {}, key.last_used_at ? when(key.last_used_at) : "never"),
        h("td", {}, key.expires_at ? when(key.expires_at) : "never"),
        h("td.key-status", {}, keyStatus(key)),
        h("td", {}, key.revoked_at ? null : revokeButton(key))))))));
    nextCursor = page.next_cursor;
    next.disabled = !nextCursor;
    first.disabled = !cursor;
  }

  next.addEventListener("click", () => { cursor = nextCursor; load(); });
  first.addEventListener("click", () => { cursor = null; load(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    for (const f of [name, expires, ...Object.values(budgetFields)]) showFieldError(f, "");
    scopeError.hidden = true;
    const body = { name: name.control.value.trim(), scopes: scopeGroup.selected() };
    if (expires.control.value) body.expires_at = localToIso(expires.control.value);
    const budgets = {};
    for (const [budget, f] of Object.entries(budgetFields)) {
      if (f.control.value.trim() !== "") budgets[budget] = Number(f.control.value);
    }
    if (Object.keys(budgets).length) body.budgets = budgets;
    try {
      const made = await api("POST", "/api-keys", { body, signal });
      outcome.append(secretPanel(`Key “${made.name}” made. The key:`, made.secret,
        "Send it as Authorization: Bearer <key>. Only its last four characters are kept.", "Copy key"));
      form.reset();
      announce("Key made. It is shown once.");
      await load();
    } catch (error) {
      if (signal.aborted) return;
      for (const fe of error instanceof ApiError ? error.fieldErrors : []) {
        const at = fe.field.replace(/^body\./, "");
        if (at === "name") showFieldError(name, fe.message);
        else if (at === "expires_at") showFieldError(expires, fe.message);
        else if (at.startsWith("scopes")) { scopeError.textContent = fe.message; scopeError.hidden = false; }
        else if (budgetFields[at.replace(/^budgets\./, "")]) showFieldError(budgetFields[at.replace(/^budgets\./, "")], fe.message);
      }
      outcome.append(notice("error", describe(error)));
    }
  });
  await load();
}
