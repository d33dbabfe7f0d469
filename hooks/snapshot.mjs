// Makes the memory snapshot the page's worker starts from (run by hooks/runtime.py at build time).
//
//   node hooks/snapshot.mjs <node_modules/pyodide> <calc wheel> <output file>
//
// Boots Pyodide in Node with its (private, 314.x) `_makeSnapshot` option, unpacks the calc wheel into
// site-packages, imports calc.page (what the worker calls) and evaluates one request, then writes
// `pyodide.makeMemorySnapshot()`: the interpreter's whole linear memory, with calc imported. The
// worker hands those bytes to `loadPyodide({_loadSnapshot})` and skips Python's start-up and imports.
//
// The bytes are made reproducible (tests/test_runtime.py makes two and compares them): without the
// four lines below, two runs differ in 5-7 MB. What differed and what fixes it:
// - string hashes (dict layouts): PYTHONHASHSEED=0;
// - the random module's two Mersenne Twister states and libc's arc4random ChaCha key: entropy from a
//   fixed xorshift stream instead of node:crypto;
// - time stamps (file mtimes in importlib's caches, time.time() floats): a frozen clock, with
//   importlib's caches invalidated after the unpack (a frozen clock leaves the directory's mtime
//   unchanged, so the finder would not see the new files);
// - argv[0] ("thisProgram", kept in memory): a fixed name.
// Entropy and hash seed matter for nothing here: no secret is made from them, and the page's own
// clock and entropy take over once the snapshot is restored.
import fs from "node:fs";
import nodeCrypto from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, wheelPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node hooks/snapshot.mjs <node_modules/pyodide> <calc wheel> <output file>");
  process.exit(2);
}

let state = 0x9e3779b9;
function fixedEntropy(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 255;
  }
  return view;
}
nodeCrypto.randomFillSync = fixedEntropy;
globalThis.crypto.getRandomValues = fixedEntropy;
Date.now = () => 1_700_000_000_000;
performance.now = () => 1000;
process.argv[1] = "/snapshot";

const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  _makeSnapshot: true, env: { PYTHONHASHSEED: "0" }, packages: [], stdout: () => {}, stderr: () => {},
});
const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
pyodide.unpackArchive(new Uint8Array(fs.readFileSync(wheelPath)), "wheel", { extractDir: sitePackages });
// The same imports as the worker's normal start, and one request, so that what calc imports lazily is
// imported too (the worker checks the answer after restoring).
pyodide.runPython(`
import importlib
importlib.invalidate_caches()
from calc.page import page_request
page_request('{"op": "evaluate", "command": "batch", "inputs": {}}')
`);
fs.writeFileSync(outPath, pyodide.makeMemorySnapshot());
