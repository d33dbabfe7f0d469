// The search worker the theme starts (overrides/main.html names it in the page's configuration):
// Material's own worker, given the site's documents when the reader first searches instead of at
// every page load (issue 15; hooks/search_index.py). A classic worker, as the theme starts it.
//
// The theme sends SETUP with the index's config and no documents (search/search_index.json, as the
// build leaves it), then QUERY messages, and waits for READY before its first query. This worker
// answers READY at once and an empty query with no results; the first other query fetches
// search/search_docs.json and the theme's worker (named by ?theme=), hands the theme's worker the
// SETUP with the documents, and passes every query on once it is READY. The theme's worker listens
// for "message" and answers with postMessage; both are put between it and the page here.
"use strict";

const SETUP = 0; // Material's SearchMessageType (src/.../search/worker/message): SETUP, READY, QUERY, RESULT
const READY = 1;
const RESULT = 3;
const THEME = /^search\.[0-9a-f]{8}\.min\.js$/; // the theme's worker, in assets/javascripts/workers/
const DOCS = new URL("../../search/search_docs.json", self.location.href);

const toPage = self.postMessage.bind(self);
let setup = null; // the theme's SETUP message (config, no documents)
let loaded = null; // promise: documents fetched and the theme's worker READY
let themeReady = null; // resolves that promise when the theme's worker says READY
let passing = false; // a message being handed to the theme's worker

/** Hand `data` to the theme's worker, as if the page had sent it. */
function pass(data) {
  passing = true;
  try {
    self.dispatchEvent(new MessageEvent("message", { data }));
  } finally {
    passing = false;
  }
}

async function load() {
  const theme = new URL(self.location.href).searchParams.get("theme") ?? "";
  if (!THEME.test(theme)) throw new Error(`search-worker.js: ?theme= must name the theme's worker, got "${theme}"`);
  const response = await fetch(DOCS);
  if (!response.ok) throw new Error(`${DOCS}: HTTP ${response.status}`);
  const { docs } = await response.json();
  importScripts(new URL(`../javascripts/workers/${theme}`, self.location.href).href);
  const ready = new Promise((resolve) => { themeReady = resolve; });
  pass({ ...setup, data: { ...setup.data, docs } });
  await ready;
}

// What the theme's worker posts: its READY is for this worker (the page has had one), the rest for the page.
self.postMessage = (message, ...rest) => {
  if (message?.type === READY && themeReady) themeReady();
  else toPage(message, ...rest);
};

addEventListener("message", (event) => {
  if (passing) return; // on its way to the theme's worker
  event.stopImmediatePropagation();
  const message = event.data;
  if (message?.type === SETUP) {
    setup = message;
    toPage({ type: READY });
  } else if (loaded === null && String(message?.data ?? "").trim() === "") {
    toPage({ type: RESULT, data: { items: [] } });
  } else {
    loaded ??= load();
    loaded.then(() => pass(message), (error) => {
      loaded = null; // the next query tries again
      console.warn(`search is unavailable: ${error.message}`);
      toPage({ type: RESULT, data: { items: [] } });
    });
  }
});
