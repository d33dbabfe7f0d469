// The one module worker that owns Pyodide and the calc wheel (see calc-runtime.mjs).
//
// Start-up: boot Pyodide while reading assets/runtime/manifest.json and fetching the wheel it
// names; check the wheel's sha256 against the manifest; unpack it into site-packages; import
// calc.series.
// Then it posts {type: "ready"} or {type: "unavailable", reason}.
//
// Protocol, page -> worker: {id, request} where request is what calc.series.page_request
// takes ({op: "evaluate", command, inputs} or {op: "ring", ranks}).
// Worker -> page: {id, answer} (the parsed JSON that page_request returns) or
// {id, failure} when the runtime is unavailable or Python raised something unexpected.
import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";

const MANIFEST_URL = new URL("../runtime/manifest.json", import.meta.url);
const PYODIDE_URL = new URL("../vendor/pyodide/", import.meta.url).href; // where pyodide.mjs came from

async function fetchBytes(url) {
  const response = await fetch(url, { cache: "no-cache" });
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
  const wheel = fetchBytes(MANIFEST_URL).then((bytes) => verifiedWheel(JSON.parse(new TextDecoder().decode(bytes))));
  wheel.catch(() => {}); // reported through the await below, not as an unhandled rejection
  const pyodide = await loadPyodide({ indexURL: PYODIDE_URL, packages: [], stdout: () => {}, stderr: () => {} });
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(await wheel, "wheel", { extractDir: sitePackages });
  // An owned proxy of calc.series.page_request, kept for the worker's lifetime.
  const pageRequest = pyodide.runPython("from calc.series import page_request\npage_request");
  return { pageRequest, version: pyodide.version };
}

const runtime = start();

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
