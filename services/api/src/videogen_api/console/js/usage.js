// Usage and budgets: seconds of video made per UTC day by provider over a chosen range, as a chart and as a
// table, with what is left of the budgets; and the account's budgets, read and set.
import { api, ApiError, enumValues } from "./api.js";
import { stackedBars } from "./chart.js";
import { announce, clear, field, h, notice, showFieldError, when } from "./dom.js";
import { describe } from "./generations.js";

const DAY_MS = 24 * 60 * 60 * 1000;
// Every budget the API takes: seconds of video, and cost in US dollars (to the millionth).
export const BUDGETS = [
  { name: "daily_video_seconds", label: "Daily video seconds", dollars: false },
  { name: "monthly_video_seconds", label: "Monthly video seconds", dollars: false },
  { name: "daily_cost", label: "Daily cost (USD)", dollars: true },
  { name: "monthly_cost", label: "Monthly cost (USD)", dollars: true },
];
const BY_NAME = Object.fromEntries(BUDGETS.map((b) => [b.name, b]));

/** An amount of a budget as a person reads it: "12 s", "$1.25". */
export function budgetAmount(name, value) {
  return BY_NAME[name]?.dollars ? `$${value}` : `${value} s`;
}

/** A budget's input: whole seconds, or dollars to the cent and below. */
export function budgetInput(budget, attributes = {}) {
  return budget.dollars
    ? h("input", { type: "number", min: 0, step: "any", inputmode: "decimal", ...attributes })
    : h("input", { type: "number", min: 0, step: 1, inputmode: "numeric", ...attributes });
}

/** What a budget's field holds, or why not: undefined for empty (no limit). */
export function budgetValue(budget, raw) {
  if (raw.trim() === "") return { value: undefined };
  const n = Number(raw);
  if (budget.dollars) {
    return Number.isFinite(n) && n >= 0 ? { value: n } : { error: "An amount of US dollars, 0 or more; empty for no limit." };
  }
  return Number.isInteger(n) && n >= 0 ? { value: n } : { error: "A whole number of seconds, 0 or more; empty for no limit." };
}

/** YYYY-MM-DD of a Date, in UTC (the API's days are UTC days). */
function utcDay(date) {
  return date.toISOString().slice(0, 10);
}

function daysBetween(first, last) {
  const days = [];
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= Date.parse(`${last}T00:00:00Z`); t += DAY_MS) {
    days.push(utcDay(new Date(t)));
  }
  return days;
}

/** What is left of each budget: a labelled meter per budget. */
export function budgetMeters(remaining, id) {
  if (!remaining.length) return h("p", { id }, "No budget is set: nothing limits what this account spends.");
  return h("ul.budgets", { id }, remaining.map((b) => {
    const whose = b.api_key_id ? `API key ${b.api_key_id}: ` : "Account: ";
    const label = `${whose}${BY_NAME[b.budget]?.label || b.budget}`;
    return h("li", { "data-budget": b.budget, "data-key": b.api_key_id || "account" },
      h("span.budget-label", {}, label),
      h("meter", { min: 0, max: b.limit, value: Math.min(b.used, b.limit), "aria-label": label }),
      h("span", {}, `${budgetAmount(b.budget, b.used)} of ${budgetAmount(b.budget, b.limit)} used, ` +
        `${budgetAmount(b.budget, b.remaining)} left; resets `, when(b.resets_at)));
  }));
}

// ---------------------------------------------------------------------------------------------------- usage

// What the usage chart and table can show: each row's field, how an amount is written, and the words for it.
const round4 = (v) => Math.round(v * 1e4) / 1e4; // costs are kept to a hundredth of a cent
const USAGE_METRICS = {
  video_seconds: {
    label: "Video seconds made", field: "video_seconds", heading: "Video seconds per day by provider",
    show: (v) => `${v} s`, cell: (v) => String(v), sum: (a, b) => a + b,
  },
  cost: {
    label: "Cost (USD)", field: "cost", heading: "Cost per day by provider (USD)",
    show: (v) => `$${round4(v)}`, cell: (v) => String(round4(v)), sum: (a, b) => round4(a + b),
  },
};

export async function usagePage(main, { signal }) {
  const providers = await enumValues("Provider");
  const series = providers.map((name, i) => ({ name, className: `series-${i}` }));
  const today = utcDay(new Date());
  const from = field("From (UTC day)", h("input", { type: "date", required: true, value: utcDay(new Date(Date.now() - 29 * DAY_MS)) }));
  const to = field("To (UTC day, included)", h("input", { type: "date", required: true, value: today }));
  const metric = field("Amount shown", h("select", {}, Object.entries(USAGE_METRICS).map(([name, m]) =>
    h("option", { value: name }, m.label))));
  const form = h("form.filters", { "aria-label": "Range", novalidate: true }, from.wrap, to.wrap, metric.wrap,
    h("div.actions", {}, h("button", { type: "submit" }, "Show")));
  const outcome = h("div", { id: "usage-outcome" });
  const summary = h("p", { id: "usage-summary" });
  const figure = h("figure.chart-figure", { id: "usage-chart" });
  const tableSlot = h("div", { id: "usage-table-slot" });
  const budgetsSlot = h("div", { id: "usage-budgets" });
  const chartHeading = h("h2", { id: "usage-chart-heading" }, USAGE_METRICS.video_seconds.heading);
  main.append(h("h1", {}, "Usage"), form, outcome, summary,
    chartHeading, figure, tableSlot,
    h("h2", {}, "Budgets"), budgetsSlot,
    h("p", {}, h("a", { href: "#/budgets" }, "Set the account's budgets")));

  let latest = 0; // a slower, older load never overwrites a newer one
  async function load() {
    const mine = ++latest;
    clear(outcome);
    showFieldError(from, "");
    showFieldError(to, "");
    const first = from.control.value;
    const last = to.control.value;
    if (!first || !last || first > last) {
      showFieldError(first ? to : from, "Choose a first day on or before the last.");
      return;
    }
    const end = utcDay(new Date(Date.parse(`${last}T00:00:00Z`) + DAY_MS));
    let usage;
    try {
      usage = await api("GET", "/usage", { query: { start: first, end }, signal });
    } catch (error) {
      if (signal.aborted || mine !== latest) return;
      for (const fe of error instanceof ApiError ? error.fieldErrors : []) {
        if (fe.field === "start") showFieldError(from, fe.message);
      }
      outcome.append(notice("error", describe(error)));
      return;
    }
    if (mine !== latest) return;
    const m = USAGE_METRICS[metric.control.value] || USAGE_METRICS.video_seconds;
    const days = daysBetween(first, last);
    const amounts = new Map(); // "day provider" -> the amount shown (video seconds made, or cost)
    for (const row of usage.data) {
      const at = `${row.date} ${row.provider}`;
      amounts.set(at, m.sum(amounts.get(at) || 0, row[m.field]));
    }
    const value = (day, provider) => amounts.get(`${day} ${provider}`) || 0;
    const byProvider = providers.map((p) => days.reduce((sum, d) => m.sum(sum, value(d, p)), 0));
    const total = byProvider.reduce(m.sum, 0);
    const t = usage.total;
    summary.textContent = `${first} to ${last} (UTC): ${t.generations} generations, ${t.seconds} s of video asked for, ${t.video_seconds} s made, costing $${round4(t.cost)}.`;

    chartHeading.textContent = m.heading;
    const legend = h("ul.legend", { id: "usage-legend" }, series.map((s, i) => h("li", { "data-series": s.name },
      h(`span.swatch.${s.className}`, { "aria-hidden": "true" }), `${s.name}: ${m.show(byProvider[i])}`)));
    const chart = stackedBars({
      categories: days, series, value, format: m.show,
      label: `${m.label} per day from ${first} to ${last}, by provider: ${series.map((s, i) => `${s.name} ${m.show(byProvider[i])}`).join(", ")}; ${m.show(total)} in all.`,
    });
    clear(figure).append(chart, h("figcaption", {}, legend));

    const shown = days.filter((d) => providers.some((p) => value(d, p) > 0));
    clear(tableSlot).append(h("div.table-wrap", {}, h("table", { id: "usage-table" },
      h("caption", {}, `${m.label} per UTC day and provider (days with none left out).`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Day"), providers.map((p) => h("th", { scope: "col" }, p)), h("th", { scope: "col" }, "Total"))),
      h("tbody", {}, shown.map((d) => h("tr", { "data-day": d }, h("th", { scope: "row" }, d),
        providers.map((p) => h("td", { "data-provider": p }, m.cell(value(d, p)))),
        h("td", { "data-provider": "total" }, m.cell(providers.reduce((sum, p) => m.sum(sum, value(d, p)), 0)))))),
      h("tfoot", {}, h("tr", { "data-day": "total" }, h("th", { scope: "row" }, "Total"),
        byProvider.map((v, i) => h("td", { "data-provider": providers[i] }, m.cell(v))),
        h("td", { "data-provider": "total" }, m.cell(total)))))));
    clear(budgetsSlot).append(budgetMeters(usage.budgets, "usage-budget-list"));
    announce(`Usage from ${first} to ${last}: ${m.show(total)} in all (${m.label.toLowerCase()}).`);
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); load(); });
  await load();
}

// ---------------------------------------------------------------------------------------------------- budgets

export async function budgetsPage(main, { signal }) {
  const current = await api("GET", "/budgets", { signal }); // before the form is shown, so nothing typed is overwritten
  const inputs = {};
  const fields = BUDGETS.map((budget) => {
    const f = field(`${budget.label} (optional)`, budgetInput(budget, { name: budget.name }),
      { hint: "Leave empty for no limit." });
    inputs[budget.name] = f;
    return f.wrap;
  });
  const outcome = h("div", { id: "budgets-outcome" });
  const form = h("form", { id: "budgets-form", novalidate: true }, fields,
    h("div.actions", {}, h("button", { type: "submit" }, "Save budgets")), outcome);
  const state = h("div", { id: "budget-state" });
  main.append(h("h1", {}, "Budgets"),
    h("p", {}, "Hard limits on the seconds of video the whole account makes, and on what they cost (each " +
      "generation's estimated cost when it is made), per UTC day and per calendar month. " +
      "A generation that would pass one is refused (429 budget-exceeded) and nothing is written; one that fails " +
      "before it reaches a provider gives its seconds and cost back. Each API key can have budgets of its own too (API keys page)."),
    form, h("h2", {}, "What is left"), state);

  function render(budgets) {
    for (const [name, f] of Object.entries(inputs)) f.control.value = budgets[name] ?? "";
    clear(state).append(budgetMeters(budgets.remaining, "budget-list"),
      h("p.hint", {}, `Reaching ${budgets.threshold_percent}% of a budget is announced once per period in the audit trail.`));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(outcome);
    const body = {};
    for (const [name, f] of Object.entries(inputs)) {
      showFieldError(f, "");
      const { value, error } = budgetValue(BY_NAME[name], f.control.value);
      if (error) {
        showFieldError(f, error);
        return;
      }
      if (value !== undefined) body[name] = value;
    }
    try {
      render(await api("PUT", "/budgets", { body, signal }));
      outcome.append(notice("ok", "Budgets saved."));
      announce("Budgets saved.");
    } catch (error) {
      if (signal.aborted) return;
      for (const fe of error instanceof ApiError ? error.fieldErrors : []) {
        if (inputs[fe.field]) showFieldError(inputs[fe.field], fe.message);
      }
      outcome.append(notice("error", describe(error)));
    }
  });
  render(current);
}
