// The light/dark switch without colour fades, and without restyling the page at load (issue 15).
//
// The theme stops every transition while it switches palettes with a rule on an attribute it sets on
// <body>; but it sets and removes that attribute at every page load too, and each time the browser
// restyles every element of the page (1.23 s of style and layout on the atlas page against 0.80 s
// without: README, "What a page loads"). The build drops that rule (hooks/theme_css.py); this module
// does the same job only when the reader switches: on the toggle's change, before the theme's own
// handler (capture, on the document), it marks <html> so atlas.css stops transitions, and unmarks it
// two frames later, once the new colours are in place (removing it then starts no transition, as no
// colour changes then). Once per document: the document outlives instant navigation.

const TOGGLE = 'input[name="__palette"]';

let frames = 0; // the pending unmarking, so quick switches keep the mark until the last has settled

document.addEventListener("change", (event) => {
  if (!(event.target instanceof Element) || !event.target.matches(TOGGLE)) return;
  document.documentElement.setAttribute("data-atlas-switching", "");
  const mine = ++frames;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (mine === frames) document.documentElement.removeAttribute("data-atlas-switching");
  }));
}, { capture: true });
