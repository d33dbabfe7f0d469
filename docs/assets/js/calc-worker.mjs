// The one module worker that owns Pyodide and the calc wheel (see calc-runtime.mjs).
//
// Start-up: boot Pyodide while reading assets/runtime/manifest.json and fetching the wheel it
// names; check the wheel's sha256 against the manifest; unpack it into site-packages; import
// calc.page.
// Then it posts {type: "ready"} or {type: "unavailable", reason}.
//
// Health, for the page's watchdog (calc-runtime.mjs): Pyodide does not reject when one of its own
// files fails (a blocked .wasm leaves it waiting), so every fetch of this worker, ours and
// Pyodide's, is watched: the first that fails ends the start at once, and each piece of data that
// arrives is posted as {type: "progress"}. The page also sends {type: "ping"}, answered with
// {type: "pong"} whenever this thread is free: a worker that answers but receives nothing is waiting
// on a network that has stopped; one that does not answer is busy starting Python.
//
// Protocol, page -> worker: {id, request} where request is what calc.page.page_request
// takes ({op: "evaluate", command, inputs} or {op: "ring", ranks}), or {type: "ping"}.
// Worker -> page: {id, answer} (the parsed JSON that page_request returns) or
// {id, failure} when the runtime is unavailable or Python raised something unexpected.
import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";

self.postMessage({ type: "progress" }); // this module and Pyodide's loader have arrived

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
    self.postMessage({ type: "progress" });
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
  self.postMessage({ type: "progress" });
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

async function start() {
  // The wheel is fetched and checked while Pyodide boots (both from this site).
  const manifest = fetchBytes(MANIFEST_URL).then((bytes) => JSON.parse(new TextDecoder().decode(bytes)));
  const wheel = manifest.then(verifiedWheel);
  wheel.catch(() => {}); // reported through the await below, not as an unhandled rejection
  const pyodide = await loadPyodide({ indexURL: PYODIDE_URL, packages: [], stdout: () => {}, stderr: () => {} });
  const expected = (await manifest).pyodide;
  if (pyodide.version !== expected) {
    throw new Error(`Pyodide ${pyodide.version} was served, but the wheel was built for ${expected}`);
  }
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(await wheel, "wheel", { extractDir: sitePackages });
  // An owned proxy of calc.page.page_request, kept for the worker's lifetime.
  const pageRequest = pyodide.runPython("from calc.page import page_request\npage_request");
  return { pageRequest, version: pyodide.version };
}

const runtime = Promise.race([start(), failure]);

runtime.then(
  ({ version }) => self.postMessage({ type: "ready", pyodide: version }),
  (error) => self.postMessage({ type: "unavailable", reason: String(error?.message ?? error) }),
);

function answer(pageRequest, request) {
  try {
    return { answer: JSON.parse(pageRequest(JSON.stringify(request))) };
  } catch (error) {
    // page_request never raises for bad input; anything else is a bug in calc, reported by type only.
    const type = error?.type ?? error?.name ?? "Error";
    return { failure: `calc failed unexpectedly (${type})` };
  }
}

self.addEventListener("message", async (event) => {
  if (event.data.type === "ping") {
    self.postMessage({ type: "pong" });
    return;
  }
  const { id, request } = event.data;
  let reply;
  try {
    const { pageRequest } = await runtime;
    const started = performance.now();
    reply = answer(pageRequest, request);
    reply.ms = performance.now() - started;
  } catch (error) {
    reply = { failure: "unavailable" };
  }
  self.postMessage({ id, ...reply });
});
