// Entry point (mkdocs.yml extra_javascript, type: module): runs once per document, so once
// across Material's instant navigation. On each page view it mounts the calculators on that page;
// the mounting code (and, later, the Python worker) is only loaded on pages that have one.

let mounting = null; // the shared promise of calc-mount.mjs, imported at most once
let page = null; // aborts the previous page's listeners and observers

document$.subscribe(() => {
  page?.abort();
  page = new AbortController();
  const roots = document.querySelectorAll("[data-calc]");
  if (roots.length === 0) return;
  const { signal } = page;
  mounting ??= import("./calc-mount.mjs");
  mounting.then((module) => {
    if (!signal.aborted) module.mountAll(roots, signal);
  });
});
