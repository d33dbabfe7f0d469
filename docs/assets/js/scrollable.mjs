// Regions that scroll sideways (wide tables, wide display formulas, mostly on phones) become
// reachable by keyboard: while a region overflows it is a focusable, named region, so arrow keys
// scroll it (WCAG 2.1.1; axe rule scrollable-region-focusable). When it fits again it is plain
// content and no extra Tab stop. Code blocks are left to the theme, which does the same for them.
// Runs on every page view, instant navigation included; the observer is replaced each time.
// Measured only in the observer's callbacks, which the browser delivers after its own layout (the
// first one for every element observed), reading every width before changing any attribute: measuring
// at mount forced a layout of the whole page, once more after each change (issue 15).

const REGIONS = [
  [".md-typeset__scrollwrap", "Table, scrolls sideways"],
  ["div.arithmatex", "Formula, scrolls sideways"],
];

let observer = null;

function overflows(element) {
  return element.scrollWidth > element.clientWidth + 1;
}

function update(element, wide) {
  if (wide && !element.hasAttribute("data-scrollable")) {
    element.setAttribute("data-scrollable", "");
    element.tabIndex = 0;
    element.setAttribute("role", "region");
    element.setAttribute("aria-label", element.dataset.scrollLabel);
  } else if (!wide && element.hasAttribute("data-scrollable")) {
    element.removeAttribute("data-scrollable");
    element.removeAttribute("tabindex");
    element.removeAttribute("role");
    element.removeAttribute("aria-label");
  }
}

document$.subscribe(() => {
  observer?.disconnect();
  observer = new ResizeObserver((entries) => {
    const measured = entries.map((entry) => [entry.target, overflows(entry.target)]);
    for (const [element, wide] of measured) update(element, wide);
  });
  for (const [selector, label] of REGIONS) {
    for (const element of document.querySelectorAll(selector)) {
      element.dataset.scrollLabel = label;
      observer.observe(element);
    }
  }
});
