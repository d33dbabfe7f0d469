// Tool pages (hooks/views.py): redraw calc's view — drawings (calc/diagram.py) and tables
// (calc/views.py) — from the worker's answer, and load presets into the form.
//
// Only places what calc computed: every element is made with createElement(NS), every text set
// with textContent, every attribute with setAttribute from a fixed list. The build hook writes
// the same structure as HTML, so the page looks the same with JavaScript off.

const SVG_NS = "http://www.w3.org/2000/svg";
const ATTRS = {
  rect: [["x", "x"], ["y", "y"], ["w", "width"], ["h", "height"], ["rx", "rx"]],
  line: [["x1", "x1"], ["y1", "y1"], ["x2", "x2"], ["y2", "y2"]],
  circle: [["cx", "cx"], ["cy", "cy"], ["r", "r"]],
  text: [["x", "x"], ["y", "y"]],
  path: [],
};
const ANCHORS = new Set(["start", "middle", "end"]);

// `uid`: the drawing's id; a pattern's id, and a fill naming it, are `uid-ID` (hooks/views.py node).
function svgItem(item, uid) {
  if (item.t === "g") {
    const g = document.createElementNS(SVG_NS, "g");
    if (item.cls) g.setAttribute("class", item.cls);
    for (const [key, value] of Object.entries(item.data ?? {})) {
      if (/^[a-z][a-z0-9-]*$/.test(key)) g.setAttribute(`data-${key}`, String(value));
    }
    if (item.title) g.append(svgTitle(item.title));
    for (const child of item.items) g.append(svgItem(child, uid));
    return g;
  }
  if (item.t === "boxes") { // many rects of one height: [x, y, w, k, title] each, class cls[k]; x, y, w in tenths
    const g = document.createElementNS(SVG_NS, "g");
    const height = String(item.h);
    for (const [x, y, w, k, title] of item.rows) {
      const el = document.createElementNS(SVG_NS, "rect");
      el.setAttribute("x", String(x / 10));
      el.setAttribute("y", String(y / 10));
      el.setAttribute("width", String(w / 10));
      el.setAttribute("height", height);
      el.setAttribute("class", String(item.cls[k]));
      if (title) el.append(svgTitle(title));
      g.append(el);
    }
    return g;
  }
  if (item.t === "pattern") {
    const defs = document.createElementNS(SVG_NS, "defs");
    const pattern = document.createElementNS(SVG_NS, "pattern");
    pattern.id = `${uid}-${item.id}`;
    pattern.setAttribute("width", String(item.w));
    pattern.setAttribute("height", String(item.h));
    pattern.setAttribute("patternUnits", "userSpaceOnUse");
    for (const child of item.items) pattern.append(svgItem(child, uid));
    defs.append(pattern);
    return defs;
  }
  if (!(item.t in ATTRS)) throw new Error(`unknown drawing primitive ${item.t}`);
  const el = document.createElementNS(SVG_NS, item.t);
  for (const [key, name] of ATTRS[item.t]) if (key in item) el.setAttribute(name, String(item[key]));
  if (item.t === "path") {
    el.setAttribute("d", String(item.d));
    if (item.fill) el.setAttribute("fill", `url(#${uid}-${item.fill})`);
  }
  if (item.cls) el.setAttribute("class", item.cls);
  if (item.t === "text") {
    el.setAttribute("text-anchor", ANCHORS.has(item.anchor) ? item.anchor : "start");
    el.textContent = item.s;
  } else if (item.title) el.append(svgTitle(item.title));
  return el;
}

function svgTitle(text) {
  const title = document.createElementNS(SVG_NS, "title");
  title.textContent = text;
  return title;
}

/** An <svg> for one drawing; `uid` names its title and description. */
export function drawing(d, uid) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "draw");
  svg.setAttribute("viewBox", `0 0 ${d.w} ${d.h}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-labelledby", `${uid}-t ${uid}-d`);
  const title = svgTitle(d.title);
  title.id = `${uid}-t`;
  const desc = document.createElementNS(SVG_NS, "desc");
  desc.id = `${uid}-d`;
  desc.textContent = d.desc;
  svg.append(title, desc);
  for (const item of d.items) svg.append(svgItem(item, uid));
  return svg;
}

/** A drawing in its figure, as the build writes it (figure.html): its aspect ratio is the drawing's, so the
 * figure keeps the drawing's height while its rendering is skipped off screen (tools.css, content-visibility). */
function figure(d, uid) {
  const el = document.createElement("figure");
  el.className = "tool__figure";
  el.style.aspectRatio = `${d.w} / ${d.h}`;
  el.append(drawing(d, uid));
  return el;
}

/** Give `shown`, a part of the view, the attributes and children of `fresh`, the same kind of part drawn for a new
 * answer. A part kept is a part whose rendering stays skipped while it is off screen (tools.css: content-visibility:
 * auto); a new element would be styled and laid out once before the browser finds it off screen (issue 15). */
function refill(shown, fresh) {
  for (const name of shown.getAttributeNames()) if (!fresh.hasAttribute(name)) shown.removeAttribute(name);
  for (const name of fresh.getAttributeNames()) {
    const value = fresh.getAttribute(name);
    if (shown.getAttribute(name) !== value) shown.setAttribute(name, value);
  }
  shown.replaceChildren(...fresh.childNodes);
}

function cell(tag, value, right) {
  const el = document.createElement(tag);
  if (right) el.className = "num";
  if (value !== null && typeof value === "object") {
    const a = document.createElement("a");
    a.setAttribute("href", String(value.href));
    a.textContent = value.text;
    el.append(a);
  } else el.textContent = String(value);
  return el;
}

/** One view table in its scrolling wrapper (see hooks/views.py table_html). */
export function table(name, t) {
  const wrap = document.createElement("div");
  wrap.className = "tool__table";
  wrap.dataset.table = name;
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", t.caption);
  const tableEl = document.createElement("table");
  tableEl.dataset.frame = "own"; // the region is its scrolling frame: the build adds no other (hooks/table_frames.py)
  const caption = document.createElement("caption");
  caption.textContent = t.caption;
  const head = document.createElement("tr");
  t.head.forEach((h, i) => {
    const th = cell("th", h, t.align[i] === "r");
    th.setAttribute("scope", "col");
    head.append(th);
  });
  const thead = document.createElement("thead");
  thead.append(head);
  const tbody = document.createElement("tbody");
  const marked = new Set(t.marked ?? []); // rows that differ between two plans (calc.views.compare_view)
  t.rows.forEach((row, r) => {
    const tr = document.createElement("tr");
    if (marked.has(r)) tr.className = "is-changed";
    row.forEach((value, i) => tr.append(cell("td", value, t.align[i] === "r")));
    tbody.append(tr);
  });
  tableEl.append(caption, thead, tbody);
  wrap.append(tableEl);
  return wrap;
}

/** Open the fold ("Edit the model and hardware") when a field in it is marked invalid or, with
 * `changed`, holds a value other than its default (a shared link's), so neither hides behind it. */
export function openFolds(root, changed = false) {
  for (const fold of root.querySelectorAll("details.calc__fold:not([open])")) {
    const fields = [...fold.querySelectorAll("[name]")];
    if (fields.some((f) => f.getAttribute("aria-invalid") === "true" || (changed && f.value.trim() !== f.dataset.default))) {
      fold.open = true;
    }
  }
}

// The atlas's layouts (calc.views.atlas_figures): tools.css shows the narrow one in a view narrower than this
// (its container query: the wide drawing's smallest labels would come out under 12 px).
const NARROW_BELOW_PX = 786;

// A figure far off screen is redrawn when it comes near the screen, not at every answer: on the timeline at
// 1280 x 720 the reader typing sees one of its three schedules, and building all three anew took 6-12 ms per input
// (make bench's input loop, paired, 2 rounds of 60 inputs: drawing p50 7.0, 6.6 -> 2.1, 2.2 ms; input -> result p95
// 25.4, 25.7 -> 16.6, 17.5 ms; README). Its title and description, which name the drawing to a screen reader
// (role img), and its height are set at once; the rest is marked stale (tools.css dims it) until drawn. The page
// tells Python which figures it draws now (`drawn()`), and a view that can (calc.views.NAMING_VIEWS: the timeline)
// sends the others named only, without items: such a figure is asked for again when it comes near (`ask`).
const NEAR = "10% 0px"; // IntersectionObserver rootMargin: within a tenth of the screen's height above or below it

/** Watch elements for coming within NEAR of the screen: `onNear(elements)` gets those that come near, `onPrint()`
 * runs before the page is printed. `shown(el)`: `el` is near, or not reported on yet, or the page is printing. */
export function watchNear(signal, { onNear, onPrint }) {
  const reported = new WeakSet(); // elements the observer has reported on: before that, shown
  const near = new WeakSet(); // elements within NEAR of the screen when last reported
  let printing = false;
  const observer = new IntersectionObserver((entries) => {
    for (const { target, isIntersecting } of entries) {
      reported.add(target);
      if (isIntersecting) near.add(target);
      else near.delete(target);
    }
    onNear(entries.filter((e) => e.isIntersecting).map((e) => e.target));
  }, { rootMargin: NEAR });
  signal.addEventListener("abort", () => observer.disconnect(), { once: true });
  window.addEventListener("beforeprint", () => {
    printing = true;
    onPrint();
  }, { signal });
  window.addEventListener("afterprint", () => { printing = false; }, { signal });
  return {
    observe: (el) => observer.observe(el),
    disconnect: () => observer.disconnect(),
    shown: (el) => printing || !reported.has(el) || near.has(el),
  };
}

/** The off-screen figures of `view`: `place(el, d, uid)` draws `d` in the figure `el` now, or when it comes near;
 * `ask()` asks Python for a new answer (for a figure named only that comes near). */
function deferOffscreen(view, signal, ask) {
  const due = new Map(); // figure -> [drawing, uid] of the newest answer not drawn yet, or null: named only
  const draw = (el, d, uid) => {
    due.delete(el);
    refill(el, figure(d, uid)); // the fresh figure has no data-stale: refill removes it
  };
  const drawDue = (figures) => {
    let named = false;
    for (const el of figures) {
      if (!due.has(el)) continue;
      const args = due.get(el);
      if (args) draw(el, ...args);
      else named = true;
    }
    if (named) ask();
  };
  // A page printed draws every figure it has; one named only is asked for, with every figure until the print ends,
  // and drawn when Python answers: after the page has been laid out for printing, which then shows it dimmed.
  const watched = watchNear(signal, { onNear: drawDue, onPrint: () => drawDue([...due.keys()]) });
  const observe = () => {
    watched.disconnect();
    due.clear();
    for (const el of view.querySelectorAll(":scope > .tool__figure")) watched.observe(el);
  };
  observe();
  return {
    /** Watch the view's figures afresh (after they were replaced). */
    observe,
    /** The indices of the figures drawn at the next answer: those near the screen or not reported on yet, or all
     * while the page is printed. */
    drawn: () => [...view.children].flatMap((el, i) => (el.className === "tool__figure" && watched.shown(el) ? [i] : [])),
    place(el, d, uid) {
      const svg = el.querySelector(":scope > svg");
      if (d.named_only) {
        if (!svg) el.replaceChildren(drawing(d, uid));
      } else {
        // the drawing's first item marks which layout it is (the atlas's wide or narrow), and tools.css shows a
        // figure by it: a figure whose layout changes is drawn now
        const layout = svg?.children[2]?.getAttribute("class") ?? null;
        if (watched.shown(el) || !svg || layout !== (d.items[0]?.cls ?? null)) {
          draw(el, d, uid);
          return;
        }
      }
      due.set(el, d.named_only ? null : [d, uid]);
      el.dataset.stale = "";
      el.style.aspectRatio = `${d.w} / ${d.h}`;
      const [title, desc] = el.querySelector(":scope > svg").children;
      if (title.textContent !== d.title) title.textContent = d.title;
      if (desc.textContent !== d.desc) desc.textContent = d.desc;
      if (d.named_only && watched.shown(el)) ask(); // it came near while Python computed
    },
  };
}

/** Make a tool's view and presets live; returns {update(answer, atDefaults), fit(), drawn()} for calc-mount.mjs.
 * `refit()` is called when the view crosses NARROW_BELOW_PX while it shows a live answer: the page asks
 * Python for the atlas layout its view shows (fit()), not for both, so it must ask again then; and when a figure
 * Python named only (drawn()) comes near the screen. */
export function mountView(root, signal, refit = () => {}) {
  const view = root.querySelector("[data-view]");
  const form = root.querySelector(".calc__form");
  for (const button of root.querySelectorAll("[data-preset]")) {
    button.disabled = false;
    button.addEventListener("click", () => {
      const values = JSON.parse(button.dataset.inputs);
      for (const field of form.querySelectorAll("[name]")) {
        if (Object.hasOwn(values, field.name)) field.value = values[field.name];
      }
      for (const other of root.querySelectorAll("[data-preset]")) {
        other.setAttribute("aria-pressed", String(other === button));
      }
      form.querySelector("[name]").dispatchEvent(new Event("input", { bubbles: true }));
    }, { signal });
  }
  const offscreen = deferOffscreen(view, signal, refit);
  let built = true; // the view shown is the build's, drawn for the default inputs (hooks/views.py), both layouts
  let width = null; // the view's content width (px), as its container query measures it; null: not yet known
  const fit = () => (width === null ? undefined : width < NARROW_BELOW_PX ? "narrow" : "wide");
  if (view.querySelector(".atlas-fit")) { // only a view with an atlas (the build drew it) has layouts to choose
    const resized = new ResizeObserver(([entry]) => {
      const before = fit();
      width = entry.contentRect.width;
      if (before !== undefined && fit() !== before && !built) refit();
    });
    resized.observe(view);
    signal.addEventListener("abort", () => resized.disconnect(), { once: true });
  }
  return {
    /** The indices of the view's figures to ask Python to draw; the others it may name only. */
    drawn: offscreen.drawn,
    /** The atlas layout to ask for: "wide" or "narrow"; undefined (both) until the view has been measured, and
     * in a view without an atlas, which a resize then never asks Python again for (the planner's search). */
    fit,
    /** Redraw for `answer`; `atDefaults`: it answers the default inputs. The build drew those already with the
     * same calc, so while its drawing is shown it stays: no new nodes to style and lay out when Python becomes
     * ready or a tool is shown again (issue 15). */
    update(answer, atDefaults) {
      if (!answer.view || (built && atDefaults)) return;
      built = false;
      const started = performance.now();
      const { figures } = answer.view;
      const tables = Object.entries(answer.view.tables);
      const shown = [...view.children];
      const same = shown.length === figures.length + tables.length
        && shown.every((el, i) => el.className === (i < figures.length ? "tool__figure" : "tool__table"));
      if (same) {
        figures.forEach((d, i) => offscreen.place(shown[i], d, `${root.id}-fig${i}`));
        tables.forEach(([name, t], j) => refill(shown[figures.length + j], table(name, t)));
      } else {
        const parts = figures.map((d, i) => figure(d, `${root.id}-fig${i}`));
        view.replaceChildren(...parts, ...tables.map(([name, t]) => table(name, t)));
        offscreen.observe();
        figures.forEach((d, i) => d.named_only && offscreen.place(parts[i], d, `${root.id}-fig${i}`));
      }
      root.dataset.drawMs = (performance.now() - started).toFixed(2);
    },
  };
}
