// The one module worker that owns Pyodide and the calc wheel (see calc-runtime.mjs).
//
// Start-up: read assets/runtime/manifest.json; fetch the wheel it names and, when it names one, the
// memory snapshot of Pyodide with calc imported (hooks/snapshot.mjs), both checked against their
// sha256; start Pyodide from the snapshot, or boot it normally when the snapshot cannot be had or
// used (reported as the reason for the fallback, never as a failure); unpack the wheel into
// site-packages (a snapshot holds memory, not files: what calc imports lazily is read from there);
// import calc.page.
// Then it posts {type: "ready", boot: "snapshot" | "normal", fallback} or {type: "unavailable", reason}.
//
// Health, for the page's watchdog (calc-runtime.mjs): Pyodide does not reject when one of its own
// files fails (a blocked .wasm leaves it waiting), so every fetch of this worker, ours and
// Pyodide's, is watched: the first that fails ends the start at once, and each piece of data that
// arrives is posted as {type: "progress"}, at most one every PROGRESS_MS (20 MB arrive in hundreds of
// pieces, each of which would otherwise be a task on the page's main thread). The page also sends {type: "ping"}, answered with
// {type: "pong"} whenever this thread is free: a worker that answers but receives nothing is waiting
// on a network that has stopped; one that does not answer is busy starting Python.
//
// Protocol, page -> worker: first {type: "start", snapshot} (whether to try the snapshot: not when
// the reader saves data or the connection is slow, as the snapshot doubles the bytes to fetch);
// then {id, request} where request is what calc.page.page_request takes
// ({op: "evaluate", command, inputs} or {op: "ring", ranks}), or {type: "ping"}.
// Worker -> page: {id, text, ms} (the JSON text that page_request returns; calc-runtime.mjs parses it) or
// {id, failure} when the runtime is unavailable or Python raised something unexpected.
//
// Warming up (issue 15): WebAssembly starts in V8's baseline code and is recompiled, optimised, function
// by function as it runs. A normal boot runs enough Python (its imports) to get the interpreter's hot
// paths optimised; a boot from the snapshot does not, and then a reader's first twenty or so inputs
// took 3 to 5 times as long as later ones (the inference calculator: 38, 18, 23, 21, ... ms, then 5 to 6).
// So after a snapshot boot the worker repeats the first request it answers, WARM_RUNS times or for
// WARM_MS, one run per task: a request that arrives meanwhile waits for one run at most. It then posts
// {type: "warm", runs, ms} ({runs: 0} after a normal boot, which needs none).
import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";

const PROGRESS_MS = 250; // well within the page watchdog's 1 s tick
const WARM_RUNS = 30; // enough that the inference calculator's, the atlas's and the timeline's first inputs ran
// as fast as their hundredth in Chromium (make bench, 2026-12-06); 20 still left slow ones
const WARM_MS = 600; // at most this much of the worker's time: a planner request takes ~150 ms
let lastProgress = -Infinity;

function progress() {
  const now = performance.now();
  if (now - lastProgress < PROGRESS_MS) return;
  lastProgress = now;
  self.postMessage({ type: "progress" });
}

progress(); // this module and Pyodide's loader have arrived

const fetchFromNetwork = self.fetch.bind(self);
let fetchFailed;
const failure = new Promise((_, reject) => {
  fetchFailed = reject;
});
failure.catch(() => {}); // reported through the race below, not as an unhandled rejection

/** Report each piece of the response's body as it arrives, reading a copy: the response itself is
 * passed on untouched, so the browser can still reuse the compiled WebAssembly it has cached for it. */
function reportProgress(response) {
  const reader = response.clone().body?.getReader();
  const next = () => reader.read().then(({ done }) => {
    if (done) return;
    progress();
    return next();
  });
  if (reader) next().catch(() => {}); // a failed body is reported by whoever reads the response
  return response;
}

// Every fetch of this worker (ours and Pyodide's): failure when it cannot, progress as data arrives.
self.fetch = async (input, init) => {
  const name = new URL(input instanceof Request ? input.url : String(input), self.location.href).pathname;
  let response;
  try {
    response = await fetchFromNetwork(input, init);
  } catch (error) {
    fetchFailed(new Error(`${name} could not be fetched`));
    throw error;
  }
  if (!response.ok) {
    fetchFailed(new Error(`${name}: HTTP ${response.status}`));
    return response;
  }
  progress();
  return reportProgress(response);
};

const MANIFEST_URL = new URL("../runtime/manifest.json", import.meta.url);
const PYODIDE_URL = new URL("../vendor/pyodide/", import.meta.url).href; // where pyodide.mjs came from

async function fetchBytes(url) {
  const response = await self.fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function verifiedWheel(manifest) {
  const bytes = await fetchBytes(new URL(manifest.wheel, MANIFEST_URL));
  const actual = await sha256Hex(bytes);
  if (actual !== manifest.sha256) {
    throw new Error(`the calc wheel does not match its manifest (sha256 ${actual.slice(0, 12)}…)`);
  }
  return bytes;
}

/** The snapshot's memory, inflated, once its gzip bytes match the manifest. Fetched past the
 * watched fetch: a snapshot that cannot be had means a normal boot, not a failed start. */
async function snapshotMemory(manifest) {
  const info = manifest.snapshot;
  if (!info) throw new Error("the manifest names no snapshot");
  const url = new URL(info.file, MANIFEST_URL);
  const response = await fetchFromNetwork(url);
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  const gz = new Uint8Array(await reportProgress(response).arrayBuffer());
  const actual = await sha256Hex(gz);
  if (actual !== info.sha256) throw new Error(`the snapshot does not match its manifest (sha256 ${actual.slice(0, 12)}…)`);
  const memory = new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip")));
  return new Uint8Array(await memory.arrayBuffer());
}

const OPTIONS = { indexURL: PYODIDE_URL, packages: [], stdout: () => {}, stderr: () => {} };

let configure;
const config = new Promise((resolve) => {
  configure = resolve;
});

/** Pyodide from the snapshot when it is wanted and can be had and used; otherwise booted as usual. */
async function bootPyodide(manifest) {
  const memory = Promise.all([manifest, config]).then(([info, { snapshot }]) => {
    if (!snapshot) throw new Error("not wanted: the reader saves data or the connection is slow");
    return snapshotMemory(info);
  });
  memory.catch(() => {}); // a missing snapshot is reported as the fallback's reason below
  try {
    // Pyodide fetches its .wasm, stdlib and lock file while the snapshot is still arriving.
    return { pyodide: await loadPyodide({ ...OPTIONS, _loadSnapshot: memory }), boot: "snapshot", fallback: "" };
  } catch (error) {
    const fallback = String(error?.message ?? error);
    return { pyodide: await loadPyodide(OPTIONS), boot: "normal", fallback };
  }
}

async function start() {
  // The wheel is fetched and checked while Pyodide starts (both from this site).
  const manifest = fetchBytes(MANIFEST_URL).then((bytes) => JSON.parse(new TextDecoder().decode(bytes)));
  const wheel = manifest.then(verifiedWheel);
  wheel.catch(() => {}); // reported through the await below, not as an unhandled rejection
  const { pyodide, boot, fallback } = await bootPyodide(manifest);
  const expected = (await manifest).pyodide;
  if (pyodide.version !== expected) {
    throw new Error(`Pyodide ${pyodide.version} was served, but the wheel was built for ${expected}`);
  }
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(await wheel, "wheel", { extractDir: sitePackages });
  // An owned proxy of calc.page.page_request, kept for the worker's lifetime (from a snapshot,
  // calc.page is imported already and this only looks it up).
  const pageRequest = pyodide.runPython("import importlib\nimportlib.invalidate_caches()\n" +
    "from calc.page import page_request\npage_request");
  return { pageRequest, version: pyodide.version, boot, fallback };
}

const runtime = Promise.race([start(), failure]);

runtime.then(
  ({ version, boot, fallback }) => self.postMessage({ type: "ready", pyodide: version, boot, fallback }),
  (error) => self.postMessage({ type: "unavailable", reason: String(error?.message ?? error) }),
);

// The answer goes to the page as page_request's JSON text, parsed there: a string crosses to the page in one
// copy, where the parsed answer (the timeline's is 1,000 small arrays) was cloned object by object, which took
// 1.0 / 3.7 ms (median / p95) against 0.6 / 0.8 ms for the text and its parse (Chromium, 2026-12-06).
function answer(pageRequest, request) {
  try {
    return { text: pageRequest(JSON.stringify(request)) };
  } catch (error) {
    // page_request never raises for bad input; anything else is a bug in calc, reported by type only.
    const type = error?.type ?? error?.name ?? "Error";
    return { failure: `calc failed unexpectedly (${type})` };
  }
}

let warmed = false; // the warm-up has started (see "Warming up" above)

function warmUp(pageRequest, boot, text) {
  if (boot !== "snapshot") {
    self.postMessage({ type: "warm", runs: 0, ms: 0 });
    return;
  }
  let runs = 0;
  let ms = 0;
  const step = () => {
    const started = performance.now();
    let failed = false;
    try {
      pageRequest(text); // its answer is the one already sent
    } catch {
      failed = true; // the page was told when it asked
    }
    ms += performance.now() - started;
    runs += 1;
    if (!failed && runs < WARM_RUNS && ms < WARM_MS) setTimeout(step, 0);
    else self.postMessage({ type: "warm", runs, ms });
  };
  setTimeout(step, 0);
}

self.addEventListener("message", async (event) => {
  if (event.data.type === "start") {
    configure(event.data);
    return;
  }
  if (event.data.type === "ping") {
    self.postMessage({ type: "pong" });
    return;
  }
  const { id, request } = event.data;
  let reply;
  try {
    const { pageRequest, boot } = await runtime;
    const started = performance.now();
    reply = answer(pageRequest, request);
    reply.ms = performance.now() - started;
    if (!warmed) {
      warmed = true;
      warmUp(pageRequest, boot, JSON.stringify(request));
    }
  } catch (error) {
    reply = { failure: "unavailable" };
  }
  self.postMessage({ id, ...reply });
});
