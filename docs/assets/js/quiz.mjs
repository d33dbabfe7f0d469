// Quizzes (hooks/quiz.py renders them): pick an option, check it, then read whether it was right
// and why. Mounted on every page view from document$ (instant navigation included); each quiz is
// mounted once, and the previous page's listeners are dropped with its AbortController.
//
// The reader's choices are kept per page in sessionStorage, for as long as the tab lives: a reload
// or a visit to another page and back finds them again. Not in the URL: a shared link should
// neither carry nor give away someone's answers, and the query string belongs to the calculators
// (calc-url.mjs). Without storage (blocked by the browser) the choices last for the page view.
//
// Reading state (readChoice, readStore) is kept apart from changing the page (show*). Text is
// written with textContent only.

const STORE = "atlas-quiz";
const mounted = new WeakSet();
let page = null; // aborts the previous page's listeners

// ---------------------------------------------------------------- reading state

function readStore() {
  try {
    const all = JSON.parse(sessionStorage.getItem(STORE) ?? "{}");
    return all && typeof all === "object" ? all : {};
  } catch {
    return {};
  }
}

function writeStore(id, entry) {
  try {
    const all = readStore();
    const here = (all[location.pathname] ??= {});
    if (entry) here[id] = entry;
    else delete here[id];
    sessionStorage.setItem(STORE, JSON.stringify(all));
  } catch {
    // storage unavailable: the choice stays on the page only
  }
}

function storedChoice(id) {
  const entry = readStore()[location.pathname]?.[id];
  return entry && typeof entry.choice === "string" ? entry : null;
}

function radios(root) {
  return Array.from(root.querySelectorAll('.quiz__options input[type="radio"]'));
}

function readChoice(root) {
  return radios(root).find((radio) => radio.checked)?.value ?? null;
}

/** An option as a verdict names it: its letter, and its words unless it holds a formula. */
function optionName(root, value) {
  const label = root.querySelector(`label[for="${CSS.escape(`${root.id}-${value}`)}"]`);
  const letter = label.querySelector(".quiz__letter").textContent.replace(".", "");
  if (label.querySelector(".katex")) return letter; // a formula's text reads badly out of its markup
  const words = label.cloneNode(true);
  words.querySelector(".quiz__letter").remove();
  return `${letter}, “${words.textContent.replace(/\s+/g, " ").trim()}”`;
}

// ---------------------------------------------------------------- changing the page

function showMarks(root, choice, answer) {
  for (const radio of radios(root)) {
    const option = radio.closest(".quiz__option");
    option.querySelector(".quiz__mark")?.remove();
    option.classList.remove("is-right", "is-wrong");
    const note = radio.value === answer ? "right answer" : radio.value === choice ? "your choice" : "";
    if (choice === null || !note) continue;
    option.classList.add(radio.value === answer ? "is-right" : "is-wrong");
    const mark = document.createElement("span");
    mark.className = "quiz__mark";
    mark.textContent = note;
    option.append(mark);
  }
}

function showVerdict(root, text) {
  const verdict = root.querySelector("[data-quiz-verdict]");
  if (verdict.textContent !== text) verdict.textContent = text;
}

function showAnswer(root, shown) {
  const fold = root.querySelector("[data-quiz-answer]");
  fold.hidden = !shown;
  if (shown) fold.open = true;
}

function verdictFor(root, choice, answer) {
  if (choice === null) return "Choose an option first.";
  if (choice === answer) return `Right: ${optionName(root, answer)}. The reasoning is below.`;
  return `Not right: you chose ${optionName(root, choice)}; the answer is ${optionName(root, answer)}. ` +
    "The reasoning is below.";
}

// ---------------------------------------------------------------- one quiz

function mountQuiz(root, signal) {
  const answer = root.dataset.answer;
  const check = root.querySelector("[data-quiz-check]");

  function checkNow() {
    const choice = readChoice(root);
    showVerdict(root, verdictFor(root, choice, answer));
    if (choice === null) return;
    showMarks(root, choice, answer);
    showAnswer(root, true);
    writeStore(root.id, { choice, checked: true });
  }

  function onChange() {
    // a new choice is not checked yet: clear the marks (the reasoning, once read, stays)
    showMarks(root, null, answer);
    showVerdict(root, "");
    writeStore(root.id, { choice: readChoice(root), checked: false });
  }

  const saved = storedChoice(root.id);
  const restored = saved && radios(root).find((radio) => radio.value === saved.choice);
  if (restored) restored.checked = true;
  showAnswer(root, Boolean(restored && saved.checked));
  if (restored && saved.checked) {
    showMarks(root, saved.choice, answer);
    showVerdict(root, verdictFor(root, saved.choice, answer));
  }

  root.querySelector(".quiz__actions").hidden = false;
  check.addEventListener("click", checkNow, { signal });
  root.querySelector(".quiz__options").addEventListener("change", onChange, { signal });
}

// ---------------------------------------------------------------- the page

document$.subscribe(() => {
  page?.abort();
  page = new AbortController();
  for (const root of document.querySelectorAll("[data-quiz]")) {
    if (mounted.has(root)) continue;
    mounted.add(root);
    mountQuiz(root, page.signal);
  }
});
