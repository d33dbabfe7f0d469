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
  const url = new URL(location.href);
  for (const field of fields) {
    if (field.value.trim() === field.dataset.default) url.searchParams.delete(field.name);
    else url.searchParams.set(field.name, field.value);
  }
  if (url.href !== location.href) history.replaceState(history.state, "", url);
}
