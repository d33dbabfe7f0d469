// The all-reduce calculator's chart: its two panels, drawn by calc (calc.views.allreduce_chart_view,
// calc.diagram.allreduce_panels) as drawing items, placed here with calc-view.mjs's `drawing`.
//
// The build drew the panels for the default inputs (hooks/widgets.py; the figure is `data-built`): an answer for
// those inputs while they are shown leaves them, so Python's first answer at load adds no nodes to style, lay
// out and paint (issue 15). Any other answer replaces both panels.
import { drawing } from "./calc-view.mjs";

const PANELS = ["ranks", "payload"];

/** Draw `chart.figures` (calc's two panels) into `figure`; `atDefaults`: the answer is for the default inputs. */
export function drawChart(figure, chart, atDefaults) {
  if (atDefaults && figure.hasAttribute("data-built")) return;
  figure.removeAttribute("data-built");
  const panels = document.createElement("div");
  panels.className = "chart__panels";
  chart.figures.forEach((d, i) => panels.append(drawing(d, `${figure.id}-${PANELS[i]}`)));
  figure.querySelector(".chart__panels").replaceWith(panels);
}
