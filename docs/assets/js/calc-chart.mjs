// Charts: the all-reduce time against ranks and against payload, as hand-drawn SVG.
//
// Everything plotted, the tick values and their labels come from calc (calc/series.py); this
// module only maps them onto log-log axes. Redrawing replaces the figure's <svg>.

const SVG = "http://www.w3.org/2000/svg";
const W = 380;
const H = 250;
const PANEL = { width: 300, height: 180, top: 14, left: 62 };

function el(name, attributes = {}, text = "") {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text) node.textContent = text;
  return node;
}

function logScale(lo, hi, from, to) {
  const a = Math.log10(lo);
  const span = Math.log10(hi) - a || 1;
  return (v) => from + ((Math.log10(v) - a) / span) * (to - from);
}

function path(points, x, y, column) {
  const usable = points.filter((p) => p[column] > 0);
  return usable.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[column]).toFixed(1)}`).join("");
}

/** One panel: curve `points` ([x, time, startup term, bandwidth term]) on log-log axes. */
function panel({ points, xTicks, yTicks, xLabel, current, crossover, crossoverLabel, id, title }) {
  const { width, height, top, left } = PANEL;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": `${id}-title`, class: "chart" });
  svg.append(el("title", { id: `${id}-title` }, title));
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]).filter((t) => t > 0).concat(yTicks.map((t) => t[0]));
  const x = logScale(Math.min(...xs), Math.max(...xs), left, left + width);
  const y = logScale(Math.min(...ys), Math.max(...ys), top + height, top);
  const g = el("g", { class: "chart__panel" });
  const clip = el("clipPath", { id }, "");
  clip.append(el("rect", { x: left, y: top, width, height }));
  g.append(clip, el("rect", { class: "chart__frame", x: left, y: top, width, height }));
  for (const [value, label] of xTicks) {
    if (value < Math.min(...xs) || value > Math.max(...xs)) continue;
    g.append(el("line", { class: "chart__grid", x1: x(value), x2: x(value), y1: top, y2: top + height }));
    g.append(el("text", { class: "chart__tick", x: x(value), y: top + height + 16, "text-anchor": "middle" }, label));
  }
  for (const [value, label] of yTicks) {
    g.append(el("line", { class: "chart__grid", x1: left, x2: left + width, y1: y(value), y2: y(value) }));
    g.append(el("text", { class: "chart__tick", x: left - 4, y: y(value) + 4, "text-anchor": "end" }, label));
  }
  g.append(el("text", { class: "chart__label", x: left + width / 2, y: top + height + 34, "text-anchor": "middle" }, xLabel));
  g.append(el("text", { class: "chart__label", x: 12, y: top + height / 2, "text-anchor": "middle",
    transform: `rotate(-90 12 ${top + height / 2})` }, "time"));
  const curves = el("g", { "clip-path": `url(#${id})` });
  curves.append(el("path", { class: "chart__term chart__term--startup", d: path(points, x, y, 2) }));
  curves.append(el("path", { class: "chart__term chart__term--bandwidth", d: path(points, x, y, 3) }));
  curves.append(el("path", { class: "chart__time", d: path(points, x, y, 1) }));
  if (crossover !== null && crossover >= Math.min(...xs) && crossover <= Math.max(...xs)) {
    const cx = x(crossover);
    curves.append(el("line", { class: "chart__crossover", x1: cx, x2: cx, y1: top, y2: top + height }));
    const anchor = cx > left + width / 2 ? "end" : "start";
    g.append(el("text", { class: "chart__note", x: cx + (anchor === "end" ? -4 : 4), y: top + 14, "text-anchor": anchor },
      `crossover ${crossoverLabel}`));
  }
  if (current[0] > 0 && current[1] > 0) {
    curves.append(el("circle", { class: "chart__current", cx: x(current[0]), cy: y(current[1]), r: 5 }));
  }
  g.append(curves);
  svg.append(g);
  return svg;
}

const LEGEND = [["time", "time T"], ["startup", "startup term"], ["bandwidth", "bandwidth term"],
  ["crossover", "crossover"], ["current", "your inputs"]];

function legend() {
  const list = document.createElement("ul");
  list.className = "chart__legend";
  for (const [kind, label] of LEGEND) {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = `chart__swatch chart__swatch--${kind}`;
    swatch.setAttribute("aria-hidden", "true");
    item.append(swatch, label);
    list.append(item);
  }
  return list;
}

/** Draw `chart` (calc.series' JSON) into `figure`; `text` holds calc's formatted results. */
export function drawChart(figure, chart, text) {
  const crossoverBytes = chart.crossover_payload_text;
  const panels = document.createElement("div");
  panels.className = "chart__panels";
  panels.append(
    panel({
      id: `${figure.id}-ranks`, points: chart.by_ranks, xTicks: chart.ticks.ranks,
      yTicks: chart.ticks.time_by_ranks, xLabel: "ranks p (payload fixed)",
      current: [chart.ranks, chart.time_s], crossover: chart.crossover_ranks,
      crossoverLabel: `p ≈ ${chart.crossover_ranks_text}`,
      title: `Time against ranks for the payload given: ${text.time_s} at ${chart.ranks} ranks; ` +
        `the startup term dominates beyond about ${chart.crossover_ranks_text} ranks.`,
    }),
    panel({
      id: `${figure.id}-payload`, points: chart.by_payload, xTicks: chart.ticks.payload,
      yTicks: chart.ticks.time_by_payload, xLabel: "payload n (ranks fixed)",
      current: [chart.payload_bytes, chart.time_s], crossover: chart.crossover_payload_bytes,
      crossoverLabel: crossoverBytes,
      title: `Time against payload for ${chart.ranks} ranks: ${text.time_s} for the payload given ` +
        `(${text.regime}); crossover payload ${crossoverBytes}.`,
    }),
  );
  const old = figure.querySelector(".chart__panels");
  if (old) old.replaceWith(panels);
  else figure.prepend(panels, legend());
  figure.querySelector(".calc__noscript")?.remove();
}
