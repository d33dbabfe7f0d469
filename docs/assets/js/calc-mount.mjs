// Calculator mounting: makes the build-time calculators (hooks/widgets.py) live.
//
// Reading state (readInputs, readQuery) is kept apart from changing the page (show*). Each
// calculator sends its inputs to calc in the worker on every input; only the answer to its latest
// request is shown. Everything is written with textContent or attributes, never as markup.
//
// Python starts when the browser is first idle after the page has loaded, on a page with a calculator
// (not when the reader asks to save data, unless one is on screen: see calc-runtime.mjs), at once when
// a calculator is focused or used, or at
// once when the address holds inputs for one (a shared link is an explicit request): that calculator
// is scrolled into view, and its build-time results are marked not current until the live ones arrive.
//
// On a page with modes (calc-mode.mjs) only the tool shown reads the address and computes; a tool
// shown again takes its fields from the address (the default where it names none) and computes.
import { request, startRuntime, startWhenIdle, watchRuntime } from "./calc-runtime.mjs";
import { readQuery, writeQuery } from "./calc-url.mjs";
import { drawChart } from "./calc-chart.mjs";
import { mountRing } from "./calc-ring.mjs";
import { mountView, openFolds } from "./calc-view.mjs";
import { mountLaunch } from "./calc-launch.mjs";
import { mountPin } from "./calc-pin.mjs";
import { mountModes } from "./calc-mode.mjs";

const mounted = new WeakSet();
const QUIET_MS = 300; // no input for this long ends a burst (a fast typist's keys are 50-200 ms apart)

const STATUS = {
  loading: "Loading Python in your browser… The results shown were computed when the site was built.",
  ready: "Live: results are computed in your browser by the same calc package the site was built with.",
  error: "Results not current: fix the marked field.",
};

// ---------------------------------------------------------------- reading state

function fieldsOf(root) {
  return Array.from(root.querySelectorAll(".calc__form [name]"));
}

function readInputs(fields) {
  const inputs = {};
  for (const field of fields) inputs[field.name] = field.value;
  return inputs;
}

function isDefault(fields) {
  return fields.every((field) => field.value.trim() === field.dataset.default);
}

// ---------------------------------------------------------------- changing the page

function showStatus(root, text) {
  const status = root.querySelector(".calc__status");
  if (status.textContent !== text) status.textContent = text;
}

function showCurrent(root, current) {
  root.querySelector(".calc__results").dataset.current = String(current);
  root.querySelector(".calc__results").classList.toggle("is-stale", !current);
  root.querySelector(".calc__stale").hidden = current;
}

function showFieldError(root, field, message) {
  const error = root.querySelector(`#${CSS.escape(field.id)}-error`);
  if (message) {
    field.setAttribute("aria-invalid", "true");
    error.textContent = message;
    error.hidden = false;
  } else if (field.hasAttribute("aria-invalid")) {
    field.removeAttribute("aria-invalid");
    error.textContent = "";
    error.hidden = true;
  }
}

function showValues(root, answer) {
  for (const dd of root.querySelectorAll("[data-result]")) {
    const key = dd.dataset.result;
    if (!(key in answer.values)) continue;
    dd.dataset.value = answer.values[key];
    dd.textContent = answer.text[key];
  }
}

function showDefaults(root, fields) {
  for (const field of fields) {
    field.value = field.dataset.default;
    showFieldError(root, field, "");
  }
}

// ---------------------------------------------------------------- one calculator

function mountCalculator(root, signal) {
  const command = root.dataset.calc;
  const fields = fieldsOf(root);
  const byName = new Map(fields.map((field) => [field.name, field]));
  const chart = root.querySelector("[data-chart]");
  const ring = root.querySelector("[data-ring]") ? mountRing(root.querySelector("[data-ring]"), signal) : null;
  const view = root.querySelector("[data-view]") ? mountView(root, signal, () => evaluate()) : null; // tool pages
  const launch = root.querySelector("[data-launch]") ? mountLaunch(root, signal) : null; // atlas, planner
  const pin = root.querySelector("[data-pin]") ? mountPin(root, fields, signal) : null; // atlas
  let latest = 0;
  let runtime = "idle";
  let shown = !root.hidden; // a tool of a mode not shown (calc-mode.mjs) neither reads the address nor computes

  const linked = shown ? readQuery(location.search, byName.keys()) : new Map();
  for (const [name, text] of linked) byName.get(name).value = text;
  openFolds(root, true);

  function setState(state) {
    root.dataset.state = state;
    if (STATUS[state]) showStatus(root, STATUS[state]);
  }

  function showAnswer(answer, ms) {
    // an element of a list input is named with its index (microbatch_sizes[0][2]): its field is the list's
    const bad = answer.ok ? undefined : byName.get(answer.param) ?? byName.get(String(answer.param).split("[")[0]);
    for (const field of fields) showFieldError(root, field, field === bad ? answer.message : "");
    if (!answer.ok) {
      setState("error");
      if (!bad) showStatus(root, `Results not current: ${answer.message}`);
      showCurrent(root, false);
      openFolds(root);
      launch?.stale();
      pin?.stale();
      return;
    }
    showValues(root, answer);
    showCurrent(root, true);
    setState("ready");
    root.dataset.ms = ms.toFixed(2);
    const atDefaults = isDefault(fields);
    if (chart && answer.chart) drawChart(chart, answer.chart, atDefaults);
    if (ring && answer.chart) ring.update(String(answer.chart.ranks));
    if (view) view.update(answer, atDefaults);
    launch?.update(answer);
    pin?.update(readInputs(fields));
  }

  async function evaluate() {
    if (!shown || runtime !== "ready") return;
    const id = ++latest;
    root.setAttribute("aria-busy", "true");
    const reply = await request({ op: "evaluate", command, inputs: readInputs(fields), fit: view?.fit(),
      drawn: view?.drawn() });
    if (id !== latest || signal.aborted) return; // an answer for older inputs: a newer one is coming
    root.setAttribute("aria-busy", "false");
    if (reply.answer) showAnswer(reply.answer, reply.ms ?? 0);
    else showUnavailable(reply.failure);
  }

  function showUnavailable(reason) {
    latest++;
    showDefaults(root, fields);
    for (const field of fields) field.readOnly = true;
    root.dataset.state = "unavailable";
    root.setAttribute("aria-busy", "false");
    showStatus(root, `The live calculator is unavailable (${reason}). ` +
      "The results shown were computed for the default inputs when the site was built.");
    showCurrent(root, true);
  }

  /** Rewrite the address for the inputs once the reader pauses: QUIET_MS after the last input, or at once when
   * the reader leaves the field (a click on a link, the address bar, another window: focus leaves it too) or
   * the page. Not while inputs come: history.replaceState holds the main thread for milliseconds and makes the
   * browser's own process work as long again, and on a 2-core machine that took a core from Python in the
   * worker (make bench's input loop, paired: inference p95 in the DOM 28.8-32.4 -> 19.0-20.9 ms; README).
   * Back pressed while a rewrite is due drops it: the entry left misses the last edit, and the one reached is
   * not overwritten. A tool hidden or a page left in the meantime writes nothing; `data-query="pending"` says
   * a rewrite is due. */
  const path = location.pathname;
  let quiet = 0;
  function writeQueryNow() {
    clearTimeout(quiet);
    if (!root.dataset.query) return;
    delete root.dataset.query;
    // instant navigation puts the next page's address before this page's calculators are unmounted
    if (shown && !signal.aborted && location.pathname === path) writeQuery(fields);
  }
  function writeQueryWhenQuiet() {
    if (!root.dataset.query) root.dataset.query = "pending";
    clearTimeout(quiet);
    quiet = setTimeout(writeQueryNow, QUIET_MS);
  }
  root.addEventListener("focusout", writeQueryNow, { signal });
  window.addEventListener("pagehide", writeQueryNow, { signal });
  document.addEventListener("visibilitychange", () => document.hidden && writeQueryNow(), { signal });
  window.addEventListener("popstate", () => {
    clearTimeout(quiet);
    delete root.dataset.query;
  }, { signal });

  function onInput() {
    if (runtime === "ready") evaluate();
    else {
      startRuntime();
      showCurrent(root, isDefault(fields));
    }
    writeQueryWhenQuiet();
  }

  for (const field of fields) {
    field.readOnly = false;
    field.disabled = false; // choices (<select>) are rendered disabled until the page is live
  }
  showCurrent(root, isDefault(fields));
  root.querySelector(".calc__form").addEventListener("input", onInput, { signal });
  root.querySelector(".calc__form").addEventListener("submit", (event) => event.preventDefault(), { signal });
  root.addEventListener("focusin", startRuntime, { signal, once: true });

  function show() {
    shown = true;
    if (runtime === "unavailable") return; // the build's results for the defaults stay
    const linked = readQuery(location.search, byName.keys());
    for (const field of fields) field.value = linked.get(field.name) ?? field.dataset.default;
    openFolds(root, true);
    if (runtime === "ready") evaluate();
    else {
      startRuntime();
      showCurrent(root, isDefault(fields));
    }
  }

  function hide() {
    shown = false;
    latest++; // an answer still on its way is for a tool no longer shown
    root.setAttribute("aria-busy", "false");
  }

  watchRuntime(({ state, reason }) => {
    runtime = state;
    if (state === "loading") setState("loading");
    else if (state === "ready") evaluate();
    else if (state === "unavailable") showUnavailable(reason);
  }, signal);
  return { linked: linked.size > 0, show, hide };
}

// ---------------------------------------------------------------- the page

/** Mount every calculator among `roots` once; start Python when the browser is idle, when one is
 * on screen, or at once when the address holds inputs for one (then bring the first such calculator into view, unless
 * the address names a place on the page with a #fragment). */
export function mountAll(roots, signal) {
  const visible = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) {
      visible.disconnect();
      startWhenIdle(signal, { whenSavingData: true }); // on screen: after first paint, not during it
    }
  });
  signal.addEventListener("abort", () => visible.disconnect(), { once: true });
  const calculators = new Map();
  mountModes(signal, { onShow: (root) => calculators.get(root)?.show(), onHide: (root) => calculators.get(root)?.hide() });
  let linked = null;
  for (const root of roots) {
    if (mounted.has(root)) continue;
    mounted.add(root);
    const calculator = mountCalculator(root, signal);
    calculators.set(root, calculator);
    if (calculator.linked) linked ??= root;
    visible.observe(root);
  }
  if (linked) {
    startRuntime();
    if (!location.hash) linked.scrollIntoView({ block: "start" });
  }
  startWhenIdle(signal);
}
