// Launch settings (hooks/views.py render_launch): the plan as Megatron-LM, torchtitan and DeepSpeed
// take it, from calc in the worker ({op: "launch"}: calc.commands.export.launches), one framework
// shown at a time, and a copy button.
//
// The atlas's answer carries its launch settings (view.launch: calc.views.plan_view); the planner
// asks for the row chosen with {op: "launch"} (calc.commands.export.launches): its inputs are the answer's
// view.inputs (the first row's) with the row's own (view.rows[i].inputs, where it differs) over them, as
// calc.views.row_inputs reads them. Only the answer to the latest request is shown; a
// framework that cannot run the plan shows calc's one line instead of any text, and while the plan
// itself is not current the panel says so and nothing can be copied. Text goes in with textContent.
import { request } from "./calc-runtime.mjs";

/** Copy `text`: the Clipboard API, else a selected textarea and the legacy copy command. */
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "launch__clipboard";
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** Make the launch panel of `root` live; returns {update(answer), stale()} for calc-mount.mjs. */
export function mountLaunch(root, signal) {
  const panel = root.querySelector("[data-launch]");
  const to = panel.querySelector("[data-launch-to]");
  const row = panel.querySelector("[data-launch-row]");
  const copy = panel.querySelector("[data-launch-copy]");
  const copied = panel.querySelector("[data-launch-copied]");
  let rows = null; // the planner's rows: [{rank, inputs}], each inputs only where it differs from `shared`
  let shared = {};
  let latest = 0;

  const shown = () => panel.querySelector(`[data-launch-panel="${CSS.escape(to.value)}"]`);

  function showChoice() {
    for (const p of panel.querySelectorAll("[data-launch-panel]")) p.hidden = p.dataset.launchPanel !== to.value;
    copy.disabled = panel.dataset.current === "false" || shown().querySelector("[data-launch-text]").hidden;
  }

  function setCurrent(current) {
    panel.dataset.current = String(current);
    showChoice();
  }

  function showLaunch(launch) {
    for (const [name, one] of Object.entries(launch)) {
      const p = panel.querySelector(`[data-launch-panel="${CSS.escape(name)}"]`);
      if (!p) continue;
      const pre = p.querySelector("[data-launch-text]");
      const error = p.querySelector("[data-launch-error]");
      pre.querySelector("code").textContent = one.ok ? one.text : "";
      pre.hidden = !one.ok;
      error.textContent = one.ok ? "" : one.message;
      error.hidden = one.ok;
    }
    setCurrent(true);
  }

  /** No plan to launch (its inputs are wrong, or the planner found none): one line, no old text. */
  function showNone(message) {
    for (const p of panel.querySelectorAll("[data-launch-panel]")) {
      p.querySelector("[data-launch-text]").hidden = true;
      p.querySelector("code").textContent = "";
      p.querySelector("[data-launch-error]").textContent = message;
      p.querySelector("[data-launch-error]").hidden = false;
    }
    setCurrent(true);
  }

  async function refresh(inputs) {
    const id = ++latest;
    setCurrent(false);
    const reply = await request({ op: "launch", inputs });
    if (id !== latest || signal.aborted) return;
    if (reply.answer?.ok) showLaunch(reply.answer.launch);
    else if (reply.answer) showNone(reply.answer.message);
  }

  function chooseRow() {
    if (rows === null) return;
    if (rows.length === 0) {
      latest++;
      showNone("No configuration fits: there is no plan to launch.");
    } else refresh({ ...shared, ...rows[Number(row.value)].inputs });
  }

  function showRows(next, inputs) {
    const keep = Math.min(Number(row.value) || 0, Math.max(next.length - 1, 0));
    rows = next;
    shared = inputs;
    row.replaceChildren(...next.map((r, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = `#${r.rank}`;
      return option;
    }));
    row.value = String(keep);
    row.disabled = next.length === 0;
  }

  to.disabled = false;
  to.addEventListener("change", showChoice, { signal });
  row?.addEventListener("change", chooseRow, { signal });
  copy.addEventListener("click", async () => {
    copied.textContent = "";
    const ok = await copyText(shown().querySelector("code").textContent);
    if (signal.aborted) return;
    requestAnimationFrame(() => { // a fresh text, so a second copy is announced again
      copied.textContent = ok ? "Copied" : "Could not copy: select the text and copy it";
    });
  }, { signal });
  setCurrent(true);

  return {
    update(answer) {
      if (answer.view?.launch) { // the atlas: computed with the plan
        latest++;
        showLaunch(answer.view.launch);
      } else if (row) {
        showRows(answer.view?.rows ?? [], answer.view?.inputs ?? {});
        chooseRow();
      }
    },
    stale() {
      latest++;
      setCurrent(false);
    },
  };
}
