// Runtime bridge: the page's side of calc-worker.mjs.
//
// One worker per document, created on the first startRuntime() call and kept across Material's
// instant navigation (this module is evaluated once per document). Requests carry ids; each
// returns a promise of the worker's reply ({answer} or {failure}).
//
// State: "idle" (no worker yet) -> "loading" -> "ready" | "unavailable"; watchRuntime() reports it.
// A failure the worker sees (a file that cannot be fetched, a wrong checksum) is reported at once.
// The watchdog covers a start that hangs: "unavailable" when the worker has shown no progress (no
// response to one of its requests has arrived) for WATCHDOG_MS, so a start that is slow but moving
// (a busy machine) is waited for, and a hung one is not.

const WATCHDOG_MS = 12000; // "unavailable" well within 15 s of the last sign of progress

const events = new EventTarget();
const pending = new Map();
let worker = null;
let nextId = 1;
let current = { state: "idle", reason: "" };
let watchdog = null;

function restartWatchdog() {
  clearTimeout(watchdog);
  watchdog = setTimeout(() => {
    if (current.state === "loading") setState("unavailable", "Python did not start in time");
  }, WATCHDOG_MS);
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
  if (message.type === "progress") restartWatchdog();
  else if (message.type === "ready") setState("ready");
  else if (message.type === "unavailable") setState("unavailable", message.reason);
  else if (pending.has(message.id)) {
    pending.get(message.id)(message);
    pending.delete(message.id);
  }
}

/** Create the worker once; later calls do nothing. */
export function startRuntime() {
  if (worker !== null) return;
  worker = new Worker(new URL("./calc-worker.mjs", import.meta.url), { type: "module", name: "calc" });
  worker.addEventListener("message", onMessage);
  worker.addEventListener("error", (event) => {
    event.preventDefault(); // reported in the page as "unavailable", not as a console error
    setState("unavailable", "the Python worker could not start");
  });
  setState("loading");
  restartWatchdog();
}

/** Call `callback({state, reason})` now and on every change, until `signal` aborts. */
export function watchRuntime(callback, signal) {
  const listener = () => callback(current);
  events.addEventListener("change", listener, { signal });
  listener();
}

/** Send one request (see calc.series.page_request); resolves with {answer} or {failure}. */
export function request(body) {
  if (current.state === "unavailable") return Promise.resolve({ failure: current.reason });
  startRuntime();
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    worker.postMessage({ id, request: body });
  });
}
