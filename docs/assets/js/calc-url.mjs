// URL state: a calculator's non-default inputs live in the page's query string.
//
// Only names of the calculator's own fields are read; anything else in the query is ignored.
// Values are only ever put into <input>.value and sent to calc as text, which rejects what it
// cannot parse, with the message shown next to the field. Nothing from the URL becomes markup.

/** Read the query: a Map of field name -> text, for the given names only. A name given twice
 * keeps its last value, as an option given twice on the command line does. */
export function readQuery(search, names) {
  const params = new URLSearchParams(search);
  const values = new Map();
  for (const name of names) {
    const texts = params.getAll(name);
    if (texts.length > 0) values.set(name, texts.at(-1));
  }
  return values;
}

/** Replace the query so it holds exactly the non-default values of `fields` (plus any parameters
 * that are not fields of this calculator); the history entry is replaced, not added. */
export function writeQuery(fields) {
  const url = putFields(new URL(location.href), fields);
  if (url.href !== location.href) history.replaceState(history.state, "", url);
}

/** `url` with each of `fields` set to its value, or removed where it holds its default. */
function putFields(url, fields) {
  for (const field of fields) {
    if (field.value.trim() === field.dataset.default) url.searchParams.delete(field.name);
    else url.searchParams.set(field.name, field.value);
  }
  return url;
}

// ---------------------------------------------------------------- modes (calc-mode.mjs)
//
// One scheme for a page with several tools (hooks/modes.py): `KEY=MODE` names the tool shown (absent
// for the default, the first), and the field names hold the shown tool's non-default values, as
// writeQuery writes them. The hidden tools' inputs are not in the address.

/** The mode the address names under `key`, as {mode, refused}: a value not among `modes` is refused
 * (its text, at most 64 characters, in `refused`) and the default mode is the one shown. A key
 * given twice keeps its last value. */
export function readMode(search, key, modes) {
  const text = readQuery(search, [key]).get(key);
  if (text === undefined) return { mode: modes[0], refused: null };
  if (modes.includes(text)) return { mode: text, refused: null };
  return { mode: modes[0], refused: text.length > 64 ? `${text.slice(0, 64)}…` : text };
}

/** The address that shows `mode`: no parameter named like a field of any tool (`names`), `key=mode`
 * (removed for `defaultMode`), then the non-default values of the shown tool's `fields`. */
export function modeHref(href, key, mode, defaultMode, names, fields) {
  const url = new URL(href);
  for (const name of names) url.searchParams.delete(name);
  if (mode === defaultMode) url.searchParams.delete(key);
  else url.searchParams.set(key, mode);
  return putFields(url, fields).href;
}
