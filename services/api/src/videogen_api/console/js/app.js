// The console's entry point: sign in and out, and a hash router over the pages.
import { api, ApiError, forgetKey, hasKey, loadKey, setKey, whenUnauthorized } from "./api.js";
import { announce, clear, field, h, notice } from "./dom.js";
import { generationDetail, generationList, newGeneration } from "./generations.js";
import { deliveryDetail, eventDetail, webhookDetail, webhookList } from "./webhooks.js";
import { auditPage } from "./audit.js";
import { batchDetail, batchList } from "./batches.js";
import { keyList } from "./keys.js";
import { budgetsPage, usagePage } from "./usage.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let pageController = null; // aborts the current page's streams and timers when another page is shown

const ROUTES = [
  [/^#\/generations\/new$/, "new", newGeneration],
  [/^#\/generations\/(gen_[0-9a-z]+)$/, "generations", generationDetail],
  [/^#\/generations$/, "generations", generationList],
  [/^#\/batches\/(bat_[0-9A-Za-z_]+)$/, "batches", batchDetail],
  [/^#\/batches$/, "batches", batchList],
  [/^#\/webhooks\/(wh_[0-9a-z]+)$/, "webhooks", webhookDetail],
  [/^#\/webhooks$/, "webhooks", webhookList],
  [/^#\/deliveries\/(msg_[0-9a-z]+)$/, "webhooks", deliveryDetail],
  [/^#\/events\/(evt_[0-9a-z_]+)$/, "webhooks", eventDetail],
  [/^#\/usage$/, "usage", usagePage],
  [/^#\/budgets$/, "budgets", budgetsPage],
  [/^#\/keys$/, "keys", keyList],
  [/^#\/audit$/, "audit", auditPage],
];

function signInPage(message) {
  nav.hidden = true;
  document.title = "Sign in · videogen console";
  const key = h("input", { type: "password", autocomplete: "off", spellcheck: "false", required: true });
  const keyField = field("API key", key, { hint: "Kept in this tab only, unless you tick “Remember”." });
  const remember = h("input", { type: "checkbox" });
  const rememberField = field("Remember on this device", remember, {
    inline: true,
    hint: "Stores the key in this browser's local storage until you sign out.",
  });
  const outcome = h("div", { id: "signin-outcome" });
  if (message) outcome.append(notice("error", message));
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h("form.signin", { novalidate: true }, keyField.wrap, rememberField.wrap, h("div.actions", {}, submit), outcome);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    const value = key.value.trim();
    if (!value) {
      outcome.append(notice("error", "Enter an API key."));
      key.focus();
      return;
    }
    submit.disabled = true;
    try {
      try {
        await api("GET", "/webhooks", { key: value });
      } catch (error) {
        // A key without webhooks:read is still a key: only a 401 refuses it.
        if (!(error instanceof ApiError && error.status === 403)) throw error;
      }
      setKey(value, remember.checked);
      if (!window.location.hash || window.location.hash === "#/signin") window.location.hash = "#/generations";
      else route();
    } catch (error) {
      const text = error instanceof ApiError && error.status === 401
        ? "That API key was not accepted (401 Unauthorized). Check that you copied the whole key, and that it has not been revoked."
        : `Could not reach the API: ${error.message}`;
      outcome.append(notice("error", text));
      key.setAttribute("aria-invalid", "true");
      key.focus();
    } finally {
      submit.disabled = false;
    }
  });
  clear(main).append(
    h("h1", { tabindex: "-1" }, "Sign in"),
    h("p", {}, "Sign in with one of your account’s API keys (make dev prints one)."),
    form,
  );
  key.focus();
}

function route() {
  if (pageController) pageController.abort();
  pageController = new AbortController();
  if (!hasKey()) {
    signInPage();
    return;
  }
  nav.hidden = false;
  const hash = window.location.hash || "#/generations";
  for (const [pattern, section, render] of ROUTES) {
    const match = hash.match(pattern);
    if (!match) continue;
    for (const link of nav.querySelectorAll("a[data-section]")) {
      if (link.dataset.section === section) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    // Each page renders into a container of its own: a page still loading when another is shown writes
    // into its detached container, never into the new page.
    const view = h("div");
    const { signal } = pageController;
    clear(main).append(view);
    render(view, { signal, params: match.slice(1) })
      .then(() => {
        if (signal.aborted) return;
        const heading = view.querySelector("h1");
        document.title = `${heading ? heading.textContent : "videogen"} · videogen console`;
        if (heading) {
          heading.setAttribute("tabindex", "-1");
          heading.focus({ preventScroll: false });
        }
      })
      .catch((error) => {
        if (signal.aborted) return;
        clear(view).append(h("h1", {}, "Something went wrong"), notice("error", error.message));
      });
    return;
  }
  window.location.hash = "#/generations";
}

whenUnauthorized(() => {
  forgetKey();
  signInPage("The API no longer accepts this key (401). Sign in again.");
});

document.getElementById("sign-out").addEventListener("click", () => {
  forgetKey();
  if (pageController) pageController.abort();
  announce("Signed out.");
  signInPage();
});

window.addEventListener("hashchange", route);
loadKey();
route();
