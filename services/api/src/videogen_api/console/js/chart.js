// A stacked bar chart drawn as SVG by the console itself (no library, nothing fetched): one bar per category
// (a day), one stacked segment per series (a provider). Every segment carries a <title> with its exact value, and
// the chart an accessible name; the page shows the same numbers as a table beside it.

const SVG_NS = "http://www.w3.org/2000/svg";
const WIDTH = 800;
const HEIGHT = 280;
const PAD = { top: 12, right: 12, bottom: 36, left: 56 };

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten, at least ``max``. */
export function niceMax(max) {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max);
}

/**
 * categories: the bars' labels (in order); series: [{name, className}]; value(category, seriesName): a number.
 * label: the chart's accessible name; format(v): a value as shown (default: rounded, then ``unit``, e.g. "s").
 */
export function stackedBars({ categories, series, value, label, unit = "", format = (v) => `${Math.round(v)} ${unit}` }) {
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const totals = categories.map((c) => series.reduce((sum, s) => sum + value(c, s.name), 0));
  const top = niceMax(Math.max(0, ...totals));
  const y = (v) => PAD.top + plotH - (v / top) * plotH;
  const slot = plotW / Math.max(1, categories.length);
  const barW = Math.max(1, slot * 0.7);
  const chart = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": label, class: "chart", focusable: "false",
  });
  const grid = svg("g", { class: "grid", "aria-hidden": "true" });
  for (let i = 0; i <= 4; i += 1) {
    const v = (top / 4) * i;
    grid.append(
      svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(v), y2: y(v) }),
      svg("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end" }, format(v)),
    );
  }
  chart.append(grid);
  // At most about 12 labels along the bottom, whatever the range.
  const every = Math.max(1, Math.ceil(categories.length / 12));
  categories.forEach((category, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    const bar = svg("g", { class: "bar", "data-category": category });
    let base = 0;
    for (const s of series) {
      const v = value(category, s.name);
      if (v <= 0) continue;
      bar.append(svg("rect", {
        x, width: barW, y: y(base + v), height: Math.max(0.5, y(base) - y(base + v)),
        class: s.className, "data-series": s.name, "data-value": v,
      }, svg("title", {}, `${category} · ${s.name}: ${format(v)}`)));
      base += v;
    }
    chart.append(bar);
    if (i % every === 0) {
      chart.append(svg("text", {
        x: x + barW / 2, y: HEIGHT - PAD.bottom + 16, "text-anchor": "middle", class: "axis", "aria-hidden": "true",
      }, category.slice(5)));
    }
  });
  chart.append(svg("line", {
    x1: PAD.left, x2: WIDTH - PAD.right, y1: y(0), y2: y(0), class: "baseline", "aria-hidden": "true",
  }));
  return chart;
}
