// pitools session viewer: draws the tree, the transcript and Pi's context at the selected entry
// from the data embedded in the page. No network (except polling its own server under
// `pitools serve`), no eval, no innerHTML of anything that was not escaped by esc().
//
// Scale: the entries are embedded one JSON text per line and parsed only when drawn (the
// read model's columns, made by pitools, answer what the tree, filters and totals need); the
// tree is virtual (fixed-height rows, only those in view plus a margin exist in the DOM); the
// transcript draws the end of the path first and earlier entries in chunks as they are scrolled
// to, each entry's body when it nears the viewport.
//
// The script is these files, in viewer_html.VIEWER_SCRIPT's order, inside one function (they
// share its scope: no modules to load, no build step, one hash for the page's CSP):
// state.js (this), util.js (pure helpers), markdown.js (text to safe HTML), data.js (the read
// model, paths, Pi's context sliced from pitools' facts), tree.js, transcript.js, main.js
// (selection, keys, start-up, live updates).
  // The page's state: the read model (META), the entries' texts and what is drawn.
  var META, RAW, PARSED, COUNT = 0, byId, searchText, callArgs;
  // early: the transcript is drawn from the entries of the first view (in the read model) while
  // the rest of the document is still being parsed; loaded: every entry's text is at hand.
  var early = false, loaded = false;
  var filterMode = "default", query = "", selected = -1, followDefault = true;
  var observer = null, ctxState = null;
  var app = document.getElementById("app");
  var F_MESSAGE = 1, F_EMPTY_REPLY = 2, F_ODD_ID = 4, F_SETTINGS = 8, F_ESTIMATED = 16;
