// Pin and compare (the atlas; hooks/views.py render_pin). "Pin this plan" keeps the current inputs
// in the address as `pin=<the atlas's own query string>`; after each answer for the current inputs
// the page asks calc ({op: "compare"}: calc.views.pinned_inputs, calc.compare) for the pinned plan
// (A) beside the current one (B) and draws its tables, the rows that differ marked. The pin is the
// reader's text: calc bounds and checks it like any input, and it only ever reaches the page as
// textContent. "Unpin" removes it.
import { request } from "./calc-runtime.mjs";
import { table } from "./calc-view.mjs";

function readPin() {
  const pins = new URLSearchParams(location.search).getAll("pin");
  return pins.length ? pins.at(-1) : null; // given twice: the last, as for any input
}

function writePin(pin) {
  const url = new URL(location.href);
  if (pin === null) url.searchParams.delete("pin");
  else url.searchParams.set("pin", pin);
  if (url.href !== location.href) history.replaceState(history.state, "", url);
}

/** The query string of the fields that differ from their defaults (what calc-url.mjs writes). */
function queryOf(fields) {
  const query = new URLSearchParams();
  for (const field of fields) if (field.value.trim() !== field.dataset.default) query.set(field.name, field.value);
  return query.toString();
}

/** Make the pin panel of `root` live; returns {update(inputs), stale()} for calc-mount.mjs. */
export function mountPin(root, fields, signal) {
  const panel = root.querySelector("[data-pin]");
  const set = panel.querySelector("[data-pin-set]");
  const clear = panel.querySelector("[data-pin-clear]");
  const status = panel.querySelector("[data-pin-status]");
  const error = panel.querySelector("[data-pin-error]");
  const reason = panel.querySelector("[data-pin-reason]");
  const view = panel.querySelector("[data-pin-view]");
  let pin = readPin();
  let latest = 0;
  let inputs = null; // the current inputs, once calc has answered for them

  function showNothing(message) {
    view.replaceChildren();
    reason.hidden = true;
    reason.textContent = "";
    error.textContent = message;
    error.hidden = message === "";
  }

  function showComparison(answer) {
    const parts = Object.entries(answer.view.tables).map(([name, t]) => table(name, t));
    const values = document.createElement("div");
    values.hidden = true;
    for (const [key, text] of Object.entries(answer.values)) {
      const value = document.createElement("span");
      value.dataset.compare = key;
      value.dataset.value = text;
      values.append(value);
    }
    view.replaceChildren(...parts, values);
    error.hidden = true;
    error.textContent = "";
    reason.textContent = answer.text.reason;
    reason.hidden = false;
  }

  async function compare() {
    const id = ++latest;
    panel.dataset.current = "false";
    const reply = await request({ op: "compare", pin, inputs });
    if (id !== latest || signal.aborted) return;
    if (reply.answer?.ok) showComparison(reply.answer);
    else showNothing(`Cannot compare: ${reply.answer ? reply.answer.message : reply.failure}`);
    panel.dataset.current = "true";
  }

  function showPinned() {
    clear.hidden = pin === null;
    panel.dataset.pinned = String(pin !== null);
    if (pin === null) {
      latest++;
      showNothing("");
      panel.dataset.current = "true";
    } else if (inputs !== null) compare();
  }

  set.disabled = false;
  set.addEventListener("click", () => {
    pin = queryOf(fields);
    writePin(pin);
    status.textContent = "Pinned: change the split to compare with this plan.";
    showPinned();
  }, { signal });
  clear.addEventListener("click", () => {
    pin = null;
    writePin(null);
    status.textContent = "Unpinned.";
    showPinned();
    set.focus();
  }, { signal });
  showPinned();

  return {
    update(current) {
      inputs = current;
      if (pin !== null) compare();
    },
    stale() {
      inputs = null;
      if (pin === null) return;
      latest++;
      showNothing("The comparison is not current: fix the marked field.");
    },
  };
}
