// Run the parity vectors inside Pyodide under Node, against the wheel the site serves.
//
// Usage: node pyodide_parity.mjs <node_modules/pyodide dir> <built site dir> [vectors.json]  (else on stdin)
// Each vector is a request object, or a string sent to page_request as it is (raw, perhaps invalid, text).
// Prints one JSON object: {version, loadedPackages, fetches, answers: [page_request answers]}.
// fetch is replaced by a function that records and refuses, so a CDN fall-back cannot go unnoticed.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, siteDir] = process.argv.slice(2);
const fetches = [];
globalThis.fetch = async (url) => {
  fetches.push(String(url));
  throw new Error(`network access refused: ${url}`);
};

const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const runtimeDir = join(siteDir, "assets", "runtime");
const manifest = JSON.parse(readFileSync(join(runtimeDir, "manifest.json"), "utf8"));
const wheel = readFileSync(join(runtimeDir, manifest.wheel));
if (createHash("sha256").update(wheel).digest("hex") !== manifest.sha256) throw new Error("wheel sha256 mismatch");

const pyodide = await loadPyodide({ indexURL: pyodideDir + "/", stdout: () => {}, stderr: () => {} });
const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
pyodide.unpackArchive(new Uint8Array(wheel), "wheel", { extractDir: sitePackages });
const pageRequest = pyodide.runPython("from calc.page import page_request\npage_request");
const location = pyodide.runPython("import calc; calc.__file__");

const requests = JSON.parse(readFileSync(process.argv[4] ?? 0, "utf8"));
const answers = requests.map((request) =>
  JSON.parse(pageRequest(typeof request === "string" ? request : JSON.stringify(request))));
pageRequest.destroy();
process.stdout.write(JSON.stringify({
  version: pyodide.version,
  python: pyodide.runPython("import sys; sys.version.split()[0]"),
  location,
  loadedPackages: Object.keys(pyodide.loadedPackages),
  fetches,
  answers,
}));
