// Render the TeX that pymdownx.arithmatex (generic mode) leaves in the page, with the
// KaTeX the site serves itself. Runs on every page view, instant navigation included.
document$.subscribe(() => {
  for (const el of document.querySelectorAll(".arithmatex:not([data-katex])")) {
    const display = el.tagName === "DIV";
    const tex = el.textContent.trim().replace(/^\\[([]/, "").replace(/\\[)\]]$/, "");
    katex.render(tex, el, { displayMode: display, throwOnError: false, output: "htmlAndMathml" });
    el.dataset.katex = "done";
  }
});
