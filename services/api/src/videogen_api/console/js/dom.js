// Building the page from data: elements and text nodes only, never HTML strings. Tenant data (prompts, URLs,
// error messages) always ends up as text.

/** h("tag.class", {attr: value, onclick: fn}, child, ...): an element; strings become text nodes. */
export function h(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(" ");
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = String(value);
    else if (name in el && typeof value !== "string") el[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

let idCounter = 0;
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** A local, readable time for an ISO timestamp, in a <time> element carrying the exact value. */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return h("time", { datetime: iso, title: iso }, date.toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
  }));
}

export function statusBadge(status) {
  return h(`span.status.status-${String(status).replace(/[^a-z]/g, "")}`, { text: status });
}

/** A value from an <input type="datetime-local">, as ISO 8601 UTC (the API wants a time zone). */
export function localToIso(value) {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** A notice the screen reader hears too. */
export function announce(message) {
  const region = document.getElementById("announcer");
  region.textContent = "";
  // A fresh text node each time, so a repeated message is read again.
  window.setTimeout(() => { region.textContent = message; }, 50);
}

export function notice(kind, ...children) {
  return h(`div.notice.${kind}`, { role: kind === "error" ? "alert" : "status" }, ...children);
}

/** A field: label, control, hint and error slot wired together with ids. */
export function field(labelText, control, { hint, inline = false } = {}) {
  const id = control.id || uid("f");
  control.id = id;
  const parts = [h("label", { for: id }, labelText)];
  const described = [];
  if (hint) {
    const hintId = `${id}-hint`;
    parts.push(h("p.hint", { id: hintId }, hint));
    described.push(hintId);
  }
  const errorId = `${id}-error`;
  const error = h("p.field-error", { id: errorId, hidden: true });
  described.push(errorId);
  control.setAttribute("aria-describedby", described.join(" "));
  const wrap = inline
    ? h("div.field.inline", {}, control, ...parts, error)
    : h("div.field", {}, parts[0], ...parts.slice(1), control, error);
  return { wrap, control, error };
}

export function showFieldError(f, message) {
  f.error.textContent = message || "";
  f.error.hidden = !message;
  if (message) f.control.setAttribute("aria-invalid", "true");
  else f.control.removeAttribute("aria-invalid");
}

export function checkboxGroup(legend, name, values, checked = []) {
  const boxes = values.map((value) => {
    const box = h("input", { type: "checkbox", name, value, checked: checked.includes(value) });
    box.defaultChecked = box.checked; // what a form reset returns to
    return { value, box, label: h("label", {}, box, value) };
  });
  const fieldset = h("fieldset", {}, h("legend", {}, legend), h("div.checks", {}, boxes.map((b) => b.label)));
  return {
    fieldset,
    selected: () => boxes.filter((b) => b.box.checked).map((b) => b.value),
    set: (list) => boxes.forEach((b) => { b.box.checked = list.includes(b.value); }),
  };
}

export function select(options, value) {
  return h("select", {}, options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
}

/** A secret shown once (a webhook's signing secret, an API key), with a copy button; ``note`` says what it is
 * for. */
export function secretPanel(title, secret, note, label = "Copy secret") {
  const value = h("code.secret", { id: "secret-value" }, secret);
  const copied = h("span.hint", { role: "status" });
  const copy = h("button.quiet", { type: "button", id: "copy-secret" }, label);
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copied.textContent = "Copied.";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(value);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      copied.textContent = "Selected: press Ctrl-C (⌘-C) to copy.";
    }
  });
  return h("div.notice.ok", { id: "secret-panel" },
    h("p", {}, h("strong", {}, title)),
    h("p", {}, `This is the only time it is shown: store it now. ${note}`),
    h("p", {}, value), h("div.actions", {}, copy, copied));
}
