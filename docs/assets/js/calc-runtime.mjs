// Runtime bridge: the page's side of calc-worker.mjs.
//
// One worker per document, created on the first startRuntime() call and kept across Material's
// instant navigation (this module is evaluated once per document). Requests carry ids; each
// returns a promise of the reply ({answer, ms}, the worker's JSON text parsed, or {failure}).
//
// State: "idle" (no worker yet) -> "loading" -> "ready" | "unavailable"; watchRuntime() reports it.
// On "ready" the page gets a performance mark "calc:ready" whose detail says how Python started
// ({boot: "snapshot" | "normal", fallback: why the snapshot was not used}), and once the worker has
// warmed up after its first answer a mark "calc:warm" ({runs, ms}: see calc-worker.mjs).
//
// Starting early: startWhenIdle() starts the worker once the page has loaded and the browser is then
// idle, so that Python is ready before the reader reaches a calculator without competing with the
// page's first paint (issue 15); not when the reader asks to save data (Save-Data, or
// prefers-reduced-data), where it starts only when a calculator shows or is used, as before, and
// boots without the memory snapshot (as on a slow connection: see calc-worker.mjs).
// A failure the worker sees (a file that cannot be fetched, a wrong checksum) is reported at once.
// The watchdog covers a start that hangs: it counts only the time the worker is idle (it answers a
// ping each second) while no data arrives, and says "unavailable" after WATCHDOG_MS of that. A slow
// network (data still arriving) or a busy machine (the worker too busy starting Python to answer)
// is waited for; a server that has stopped answering is not. Before the worker's first message
// (its own script still loading) every second counts.

const WATCHDOG_MS = 12000; // "unavailable" well within 15 s of idle waiting
const PING_MS = 1000;

const events = new EventTarget();
const pending = new Map();
let worker = null;
let nextId = 1;
let current = { state: "idle", reason: "" };
let quiet = 0; // ms the worker has spent idle with no data arriving
let heard = false; // the worker has sent a message (its script runs)
let answered = true; // it answered the last ping

function watchdog() {
  const timer = setInterval(() => {
    if (current.state !== "loading") {
      clearInterval(timer);
      return;
    }
    if (answered || !heard) quiet += PING_MS;
    if (quiet >= WATCHDOG_MS) {
      setState("unavailable", "Python did not start in time");
      return;
    }
    answered = false;
    worker.postMessage({ type: "ping" });
  }, PING_MS);
}

function setState(state, reason = "") {
  if (current.state === "unavailable" || current.state === state) return;
  current = { state, reason };
  events.dispatchEvent(new Event("change"));
  if (state === "unavailable") {
    for (const resolve of pending.values()) resolve({ failure: reason });
    pending.clear();
    worker?.terminate();
  }
}

function onMessage(event) {
  const message = event.data;
  heard = true;
  if (message.type === "progress") quiet = 0;
  else if (message.type === "pong") answered = true;
  else if (message.type === "ready") {
    performance.mark("calc:ready", { detail: { boot: message.boot, fallback: message.fallback } });
    setState("ready");
  }
  else if (message.type === "warm") performance.mark("calc:warm", { detail: { runs: message.runs, ms: message.ms } });
  else if (message.type === "unavailable") setState("unavailable", message.reason);
  else if (pending.has(message.id)) {
    pending.get(message.id)(message.text === undefined ? message : parsed(message));
    pending.delete(message.id);
  }
}

/** A reply's answer, from the JSON text the worker sends (see calc-worker.mjs: answer). */
function parsed({ text, ms }) {
  try {
    return { answer: JSON.parse(text), ms };
  } catch (error) {
    return { failure: `calc failed unexpectedly (${error?.name ?? "Error"})` }; // page_request writes strict JSON
  }
}

/** Create the worker once; later calls do nothing. */
export function startRuntime() {
  if (worker !== null) return;
  worker = new Worker(new URL("./calc-worker.mjs", import.meta.url), { type: "module", name: "calc" });
  worker.addEventListener("message", onMessage);
  worker.postMessage({ type: "start", snapshot: !savingData() && !slowConnection() });
  worker.addEventListener("error", (event) => {
    event.preventDefault(); // reported in the page as "unavailable", not as a console error
    setState("unavailable", "the Python worker could not start");
  });
  setState("loading");
  watchdog();
}

/** Call `callback({state, reason})` now and on every change, until `signal` aborts. */
export function watchRuntime(callback, signal) {
  const listener = () => callback(current);
  events.addEventListener("change", listener, { signal });
  listener();
}

/** Send one request (see calc.page.page_request); resolves with {answer} or {failure}. */
export function request(body) {
  if (current.state === "unavailable") return Promise.resolve({ failure: current.reason });
  startRuntime();
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    worker.postMessage({ id, request: body });
  });
}

/** The reader asked to save data: the Save-Data hint, or the prefers-reduced-data media feature. */
export function savingData() {
  return navigator.connection?.saveData === true || matchMedia("(prefers-reduced-data: reduce)").matches;
}

/** The connection is slow (2G or 3G class, where the browser says so): the memory snapshot, 6.7 MB more to
 * fetch than a normal boot, would cost more time than it saves. */
function slowConnection() {
  return /(^|-)[23]g$/.test(navigator.connection?.effectiveType ?? "");
}

/** Start the worker once the page has loaded and the browser is then idle (after the page's own work and
 * first paint), unless the reader asks to save data or `signal` aborts first (the reader left the page).
 * `whenSavingData`: start even then (a calculator has come on screen). */
export function startWhenIdle(signal, { whenSavingData = false } = {}) {
  if (worker !== null || (savingData() && !whenSavingData)) return;
  const start = () => {
    if (!signal.aborted) startRuntime();
  };
  const whenIdle = () => {
    if ("requestIdleCallback" in self) {
      const handle = requestIdleCallback(start);
      signal.addEventListener("abort", () => cancelIdleCallback(handle), { once: true });
    } else {
      setTimeout(start, 0); // no idle callbacks (Safari): after the page has loaded
    }
  };
  if (document.readyState === "complete") whenIdle();
  else addEventListener("load", whenIdle, { once: true, signal });
}
