// Modes (hooks/modes.py): one page, several tools, one shown. The atlas shows either its "Training
// step" (plan) or "Serving (per generated token)" (infer), chosen in a radio group.
//
// The mode is in the address as KEY=MODE (absent for the default, the first), beside the shown tool's
// non-default fields (calc-url.mjs), so a link opens that mode and a reload keeps it. Choosing a mode
// adds a history entry, so Back and Forward switch back; the shown tool then takes its fields from
// the address. A mode the address names but the page does not have is refused in the switch's polite
// note, and the default is shown. Tools not shown have the hidden attribute and compute nothing
// (calc-mount.mjs). Each mode keeps its own inputs: the two commands' defaults are different models
// on different hardware, and their fields do not map one to one (a training split's data-parallel
// degree, sequence length and precision are not a serving replica's).
import { modeHref, readMode } from "./calc-url.mjs";

const mounted = new WeakSet();

// ---------------------------------------------------------------- reading state

function radiosOf(modes) {
  return Array.from(modes.querySelectorAll('input[type="radio"][data-panel]'));
}

function panelOf(radio) {
  const panel = document.getElementById(radio.dataset.panel);
  if (!panel) throw new Error(`mode ${radio.value}: no tool with id ${radio.dataset.panel} on this page`);
  return panel;
}

function fieldsOf(panel) {
  return Array.from(panel.querySelectorAll(".calc__form [name]"));
}

// ---------------------------------------------------------------- changing the page

function showMode(radios, mode) {
  for (const radio of radios) {
    radio.checked = radio.value === mode;
    panelOf(radio).hidden = radio.value !== mode;
  }
}

function refusedText(key, modes, refused, shown) {
  return `${key} must be one of ${modes.join(", ")}, got ${JSON.stringify(refused)}: showing ${shown}.`;
}

// ---------------------------------------------------------------- the switch

/** Make the page's mode switch live, if it has one, before the calculators mount: the address's mode
 * is shown and the other tools hidden. `onShow(panel)` is called when a tool is shown again (after a
 * choice or Back/Forward), `onHide(panel)` when it is hidden. Returns whether there is a switch. */
export function mountModes(signal, { onShow, onHide }) {
  const modes = document.querySelector("[data-modes]");
  if (!modes || mounted.has(modes)) return false;
  mounted.add(modes);
  const key = modes.dataset.modes;
  const radios = radiosOf(modes);
  const names = radios.map((radio) => radio.value);
  const labels = new Map(radios.map((radio) => [radio.value, radio.parentElement.textContent.trim()]));
  const fieldNames = [...new Set(radios.flatMap((radio) => fieldsOf(panelOf(radio)).map((f) => f.name)))];
  const note = modes.querySelector("[data-modes-note]");
  const path = location.pathname;
  let current = null;

  function show(mode) {
    const previous = current;
    current = mode;
    showMode(radios, mode);
    if (previous === null) return;
    if (previous !== mode) onHide(panelOf(radios[names.indexOf(previous)]));
    onShow(panelOf(radios[names.indexOf(mode)]));
  }

  function fromAddress() {
    const { mode, refused } = readMode(location.search, key, names);
    note.textContent = refused === null ? "" : refusedText(key, names, refused, labels.get(mode));
    if (refused !== null) {
      history.replaceState(history.state, "", modeHref(location.href, key, mode, names[0], [], []));
    }
    show(mode);
  }

  fromAddress();
  modes.hidden = false;
  modes.addEventListener("change", (event) => {
    const mode = event.target.value;
    if (mode === current) return;
    note.textContent = "";
    const fields = fieldsOf(panelOf(event.target));
    history.pushState(null, "", modeHref(location.href, key, mode, names[0], fieldNames, fields));
    show(mode);
  }, { signal });
  window.addEventListener("popstate", () => {
    if (modes.isConnected && location.pathname === path) fromAddress();
  }, { signal });
  return true;
}
