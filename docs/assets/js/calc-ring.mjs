// The ring all-reduce, step by step: which chunk crosses which device boundary at each step.
//
// The schedule and the state after each step come from calc (calc.series.ring_view, asked for
// through the worker when the number of ranks changes). Controls are a range input and two
// buttons, so the view is operable from the keyboard; the caption is a polite live region.
import { request } from "./calc-runtime.mjs";
import { watchNear } from "./calc-view.mjs";

function make(name, attributes = {}, text = "") {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text) node.textContent = text;
  return node;
}

function caption(ring, index) {
  const total = ring.steps.length;
  const p = ring.ranks;
  if (index === 0) return `Start: each of the ${p} ranks holds its own full gradient, cut into ${p} chunks (1/${p} each).`;
  const step = ring.steps[index - 1];
  const what = step.phase === "reduce-scatter"
    ? "each rank sends one chunk to its right neighbour, which adds it to its own copy"
    : "each rank sends one fully reduced chunk to its right neighbour, which keeps it";
  const done = index === total ? " Done: every rank holds the full sum of every chunk." : "";
  return `Step ${index} of ${total}, ${step.phase}: ${what}.${done}`;
}

function table(ring, index) {
  const p = ring.ranks;
  const held = ring.held[index];
  const received = new Map();
  if (index > 0) for (const [src, dst, chunk, reduce] of ring.steps[index - 1].transfers) received.set(`${dst},${chunk}`, [src, reduce]);
  const t = make("table", { class: "ring__table" });
  t.append(make("caption", {}, `Contributions to each chunk held by each rank (of ${p}) after this step`));
  const head = make("tr");
  head.append(make("th", { scope: "col" }, "rank"));
  for (let c = 0; c < p; c++) head.append(make("th", { scope: "col" }, `chunk ${c}`));
  t.append(make("thead"));
  t.tHead.append(head);
  const body = make("tbody");
  for (let r = 0; r < p; r++) {
    const row = make("tr");
    row.append(make("th", { scope: "row" }, `rank ${r}`));
    for (let c = 0; c < p; c++) {
      const cell = make("td", { style: `--held: ${held[r][c] / p}` }, `${held[r][c]}/${p}`);
      const from = received.get(`${r},${c}`);
      if (from) {
        cell.classList.add(from[1] ? "is-added" : "is-copied");
        cell.append(make("span", { class: "ring__from" }, ` ← ${from[0]}`));
      }
      row.append(cell);
    }
    body.append(row);
  }
  t.append(body);
  return t;
}

function transfers(ring, index) {
  const list = make("ul", { class: "ring__moves" });
  if (index === 0) return list;
  for (const [src, dst, chunk, reduce] of ring.steps[index - 1].transfers) {
    list.append(make("li", {}, `rank ${src} → rank ${dst}: chunk ${chunk}, ${reduce ? "added" : "copied"}`));
  }
  return list;
}

/** Build the controls in `section`; returns {update(ranksJson)} to follow the calculator's ranks. */
export function mountRing(section, signal) {
  const id = section.id;
  const controls = make("div", { class: "ring__controls" });
  const prev = make("button", { type: "button", class: "md-button" }, "Previous step");
  const next = make("button", { type: "button", class: "md-button" }, "Next step");
  const slider = make("input", { type: "range", min: 0, max: 0, value: 0, step: 1, id: `${id}-step`, "aria-label": "Step" });
  const note = make("p", { class: "ring__note" });
  const live = make("p", { class: "ring__caption", "aria-live": "polite" });
  const view = make("div", { class: "ring__view" });
  controls.append(prev, slider, next);
  section.querySelector(".calc__noscript")?.remove();
  section.append(note, controls, live, view);
  prev.disabled = next.disabled = slider.disabled = true;

  let ring = null;
  let shownFor = null;

  function show(index) {
    const i = Math.max(0, Math.min(ring.steps.length, index));
    slider.value = String(i);
    slider.setAttribute("aria-valuetext", `step ${i} of ${ring.steps.length}`);
    prev.disabled = i === 0;
    next.disabled = i === ring.steps.length;
    live.textContent = caption(ring, i);
    view.replaceChildren(table(ring, i), transfers(ring, i));
  }

  prev.addEventListener("click", () => show(Number(slider.value) - 1), { signal });
  next.addEventListener("click", () => show(Number(slider.value) + 1), { signal });
  slider.addEventListener("input", () => show(Number(slider.value)), { signal });

  function describe() {
    note.textContent = ring.ranks === ring.requested
      ? `Drawn for the ${ring.ranks} ranks above.`
      : `Drawn for ${ring.ranks} ranks; a ring of ${ring.requested} follows the same pattern in ${2 * (ring.requested - 1)} steps.`;
  }

  // Far off screen (more than a tenth of a screen away), the ring is not asked for or drawn: the newest ranks
  // wait until it comes near, or the page is printed (asked for then, it arrives after the print's layout, as a
  // tool's figure named only does). At load the calculator's first answer would otherwise add the table in a
  // frame of its own while the reader is at the top of the page (issue 15).
  let wanted = null; // ranks asked for while far off screen
  const later = () => {
    if (wanted === null) return;
    const ranks = wanted;
    wanted = null;
    delete section.dataset.due;
    update(ranks);
  };
  const watched = watchNear(signal, { onNear: (near) => near.length && later(), onPrint: later });
  watched.observe(section);

  async function update(ranks) {
    if (!watched.shown(section)) {
      wanted = ranks;
      section.dataset.due = ranks; // what it will be drawn for when it comes near
      return;
    }
    if (ranks === shownFor) return;
    shownFor = ranks;
    // A ring drawn smaller than asked (calc draws at most a few ranks) is what any larger ring is drawn as:
    // only the note changes, and the reader keeps the step they are on.
    if (ring && ring.ranks < ring.requested && Number(ranks) >= ring.ranks) {
      ring = { ...ring, requested: Number(ranks) };
      describe();
      return;
    }
    const reply = await request({ op: "ring", ranks });
    if (shownFor !== ranks || signal.aborted || !reply.answer?.ok) return;
    ring = reply.answer.ring;
    describe();
    slider.max = String(ring.steps.length);
    slider.disabled = false;
    show(0);
  }

  return { update };
}
