// pitools session viewer: draws the tree, the transcript and Pi's context at the selected entry
// from the data embedded in the page. No network (except polling its own server under
// `pitools serve`), no eval, no innerHTML of anything that was not escaped by esc().
//
// Scale: the entries are embedded one JSON text per line and parsed only when drawn (the
// read model's columns, made by pitools, answer what the tree, filters and totals need); the
// tree is virtual (fixed-height rows, only those in view plus a margin exist in the DOM); the
// transcript draws the end of the path first and earlier entries in chunks as they are scrolled
// to, each entry's body when it nears the viewport.
"use strict";
(function () {
  var META, RAW, PARSED, COUNT = 0, byId, searchText, callArgs;
  // early: the transcript is drawn from the entries of the first view (in the read model) while
  // the rest of the document is still being parsed; loaded: every entry's text is at hand.
  var early = false, loaded = false;
  var filterMode = "default", query = "", selected = -1, followDefault = true;
  var observer = null, ctxState = null;
  var app = document.getElementById("app");
  var F_MESSAGE = 1, F_EMPTY_REPLY = 2, F_ODD_ID = 4, F_SETTINGS = 8, F_ESTIMATED = 16;

  // -- helpers ------------------------------------------------------------------------------
  function esc(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function idText(p) { return META.ids[p]; }
  function fmt(n) { return typeof n === "number" && isFinite(n) ? n.toLocaleString("en-US") : "?"; }
  function money(n) { return typeof n === "number" && isFinite(n) ? "$" + (n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)) : ""; }
  function msgOf(e) { return isObj(e) && e.type === "message" && isObj(e.message) ? e.message : null; }
  function textOf(content, sep) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    var out = [];
    for (var i = 0; i < content.length; i++) {
      var c = content[i];
      if (isObj(c) && c.type === "text" && typeof c.text === "string") out.push(c.text);
    }
    return out.join(sep === undefined ? "\n" : sep);
  }
  // A stored time as the reader's local time (YYYY-MM-DD HH:MM:SS), the stored value on hover; a
  // value Date cannot read is shown as it is.
  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function localTime(ts) {
    var d = new Date(ts);
    if (typeof ts !== "string" || isNaN(d.getTime())) return String(ts);
    return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + " " + pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds());
  }
  function timeHtml(ts) { return '<time datetime="' + esc(ts) + '" title="' + esc(ts) + '">' + esc(localTime(ts)) + "</time>"; }
  function oneLine(s, n) {
    s = String(s).replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }
  function costOf(m) {
    return m && isObj(m.usage) && isObj(m.usage.cost) && typeof m.usage.cost.total === "number" ? m.usage.cost.total : 0;
  }

  // -- data ---------------------------------------------------------------------------------
  // RAW[i] is entry i's JSON text (a slice of the embedded text, not a copy); entry(i) parses it
  // once, when first drawn.
  // The embedded block is a JSON array with one entry per line ("[", "entry,", ..., "entry",
  // "]"): each line, without its comma, is one entry's text.
  function splitLines(text, out) {
    var at = 0, n = text.length;
    while (at < n) {
      var nl = text.indexOf("\n", at);
      if (nl < 0) nl = n;
      var end = nl;
      while (end > at && (text.charCodeAt(end - 1) === 13 || text.charCodeAt(end - 1) === 32)) end--;
      if (end > at && text.charCodeAt(end - 1) === 44) end--;
      var line = end - at;
      if (line > 0 && !(line === 1 && (text.charCodeAt(at) === 91 || text.charCodeAt(at) === 93))) out.push(text.slice(at, end));
      at = nl + 1;
    }
    return out;
  }
  function entry(p) {
    var e = PARSED[p];
    if (e === undefined) {
      var text = RAW[p];
      if (text === undefined) return null;  // not read yet: the page is still loading
      try { e = JSON.parse(text); } catch (err) { e = null; }
      PARSED[p] = e;
    }
    return e;
  }
  function load(meta, raw) {
    META = meta; RAW = raw; COUNT = meta.ids.length; PARSED = new Array(COUNT); searchText = null; callArgs = null;
    var first = meta.firstView;
    if (first) for (var key in first) if (Object.prototype.hasOwnProperty.call(first, key)) PARSED[+key] = first[key];
    byId = new Map();
    var ids = meta.ids, flags = meta.flags;
    for (var i = 0; i < ids.length; i++) if (!(flags[i] & F_ODD_ID)) byId.set(ids[i], i);
    index();
  }
  // Once per load: the tree-order position of every entry, and branch totals from the root
  // (a path's cost, tokens and calls are then two lookups, not a walk).
  var orderIndex, cumCost, cumTok, cumCalls, cumReplies, mark;
  function index() {
    var n = COUNT, order = META.order, parent = META.parent;
    orderIndex = new Int32Array(n);
    cumCost = new Float64Array(n); cumTok = new Float64Array(n); cumCalls = new Int32Array(n); cumReplies = new Int32Array(n);
    mark = new Uint8Array(n);
    for (var i = 0; i < order.length; i++) {
      var p = order[i], q = parent[p], reply = META.flags[p] & F_MESSAGE && META.kinds[p] === "assistant";
      orderIndex[p] = i;
      var base = q >= 0 && orderIndex[q] < i && order[orderIndex[q]] === q;
      cumCost[p] = (base ? cumCost[q] : 0) + META.cost[p];
      cumTok[p] = (base ? cumTok[q] : 0) + META.usageTotal[p];
      cumCalls[p] = (base ? cumCalls[q] : 0) + META.calls[p];
      cumReplies[p] = (base ? cumReplies[q] : 0) + (reply ? 1 : 0);
    }
  }
  function posOfId(id) { var p = byId.get(id); return p === undefined ? -1 : p; }

  // Pi's getBranch from a position: root → entry (a loop is cut where it repeats).
  function pathTo(pos) {
    var out = [], seen = new Set();
    while (pos >= 0 && !seen.has(pos)) { seen.add(pos); out.push(pos); pos = META.parent[pos]; }
    return out.reverse();
  }
  function isSystemMessage(p) { return (META.flags[p] & F_MESSAGE) && META.kinds[p] === "system"; }
  // Pi's context at an entry (buildContextEntries), sliced from its path with the facts pitools
  // worked out: the compaction Pi puts first (ctxComp, compactions), the kept range before it
  // without system messages, then everything after it.
  function contextAt(pos, path) {
    var c = META.ctxComp[pos], cut = c >= 0 ? META.compactions[String(c)] : null;
    var ci = cut ? path.indexOf(cut[0]) : -1;
    if (ci < 0) return { order: path.slice(), compIdx: -1 };
    var start = path.indexOf(cut[1]);
    if (start < 0 || start > ci) start = ci;
    var order = [path[ci]];
    for (var a = start; a < ci; a++) if (!isSystemMessage(path[a])) order.push(path[a]);
    for (var b = ci + 1; b < path.length; b++) order.push(path[b]);
    return { order: order, compIdx: ci };
  }

  // -- tree ---------------------------------------------------------------------------------
  function kindOf(p) {
    var k = META.kinds[p];
    if (META.flags[p] & F_MESSAGE) return [k, k];
    return [k, k.replace(/_/g, " ")];
  }
  function preview(e) {
    if (!isObj(e)) return JSON.stringify(e);
    var m = msgOf(e);
    if (m) {
      if (m.role === "assistant" && Array.isArray(m.content)) {
        var t = textOf(m.content, " ");
        if (t.trim()) return t;
        var calls = m.content.filter(function (c) { return isObj(c) && c.type === "toolCall"; })
          .map(function (c) { return String(c.name) + toolHint(c.arguments); });
        if (calls.length) return "→ " + calls.join(", ");
        return m.stopReason && m.stopReason !== "stop" ? "(" + m.stopReason + ")" : "";
      }
      if (m.role === "toolResult") return String(m.toolName || "") + ": " + textOf(m.content, " ");
      if (m.role === "bashExecution") return "$ " + String(m.command || "");
      return textOf(m.content, " ");
    }
    switch (e.type) {
      case "compaction": return "compaction: " + String(e.summary || "");
      case "branch_summary": return "branch summary: " + String(e.summary || "");
      case "model_change": return String(e.provider) + "/" + String(e.modelId);
      case "thinking_level_change": return "thinking " + String(e.thinkingLevel);
      case "label": return (e.label ? "“" + String(e.label) + "”" : "(cleared)") + " → " + String(e.targetId);
      case "custom_message": return String(e.customType || "") + ": " + (typeof e.content === "string" ? e.content : textOf(e.content, " "));
      case "context_edit": return (e.replacement === null ? "omit " : "replace ") + String(e.targetId);
      case "session_info": return "name: " + String(e.name);
      default: return String(e.customType || "");
    }
  }
  function toolHint(args) {
    if (!isObj(args)) return "";
    var v = args.path || args.file_path || args.command || args.pattern;
    return typeof v === "string" ? " " + oneLine(v, 60) : "";
  }
  // Pi's tree filters (export-html): default, no-tools, user-only, labeled-only, all; plus
  // search over label, kind, preview and id (the entries are parsed for it once, on first use).
  function passes(pos) {
    if (pos === selected) return true;
    var f = META.flags[pos], k = META.kinds[pos], msg = f & F_MESSAGE;
    if (filterMode !== "all" && (f & F_EMPTY_REPLY)) return false;
    var ok = true;
    if (filterMode === "user-only") ok = msg && k === "user";
    else if (filterMode === "no-tools") ok = !(f & F_SETTINGS) && !(msg && k === "toolResult");
    else if (filterMode === "labeled-only") ok = META.labels[pos] !== undefined;
    else if (filterMode === "default") ok = !(f & F_SETTINGS);
    if (!ok) return false;
    if (query) {
      if (!searchText) searchText = new Array(COUNT);
      var t = searchText[pos];
      if (t === undefined) {
        var lab = META.labels[pos] || "", e = PARSED[pos];
        if (e === undefined) { try { e = JSON.parse(RAW[pos]); } catch (err) { e = null; } }
        t = searchText[pos] = (lab + " " + kindOf(pos)[1] + " " + preview(e) + " " + idText(pos)).toLowerCase();
      }
      var tokens = query.split(/\s+/).filter(Boolean);
      for (var i = 0; i < tokens.length; i++) if (t.indexOf(tokens[i]) < 0) return false;
    }
    return true;
  }
  // The virtual tree: vis holds the tree-order positions that pass the filter; only the rows
  // from about MARGIN above to MARGIN below the viewport are in the DOM.
  var ROW_H = 22, MARGIN = 40, vis = new Int32Array(0), visLen = 0, visAt = new Int32Array(0), drawn = [-1, -1];
  function applyFilter() {
    var order = META.order, n = order.length;
    if (!loaded) return;
    if (vis.length !== n) { vis = new Int32Array(n); visAt = new Int32Array(COUNT); }
    visAt.fill(-1);
    var k = 0;
    for (var i = 0; i < n; i++) { var p = order[i]; if (passes(p)) { visAt[p] = k; vis[k++] = p; } }
    visLen = k;
    layout();
    document.getElementById("tree-space").style.height = visLen * ROW_H + "px";
    document.getElementById("tree-status").textContent = fmt(visLen) + " / " + fmt(COUNT) + " entries";
    drawTree(true);
  }
  // Connectors as Pi's /tree and HTML export draw them, over the rows the filter shows: an entry
  // hangs under its nearest shown ancestor; a chain of single children stays flush, forks get
  // ├─ / └─ and the lines (│) that lead on to later siblings. One pass over the tree order (a
  // parent comes before its children) and one over the shown rows.
  var lay = { indent: new Int32Array(0), bits: new Uint8Array(0), gutters: [], multi: false };
  function layout() {
    var n = COUNT, order = META.order, parent = META.parent;
    if (lay.indent.length !== n) { lay.indent = new Int32Array(n); lay.bits = new Uint8Array(n); lay.gutters = new Array(n); }
    var anc = new Int32Array(n).fill(-1), kids = new Map(), roots = [];
    for (var i = 0; i < order.length; i++) {
      var p = order[i], q = parent[p];
      anc[p] = q < 0 || orderIndex[q] >= i ? -1 : (visAt[q] >= 0 ? q : anc[q]);
    }
    for (var j = 0; j < visLen; j++) {
      var v = vis[j], a = anc[v];
      if (a < 0) roots.push(v);
      else { var list = kids.get(a); if (list) list.push(v); else kids.set(a, [v]); }
    }
    var multi = roots.length > 1, stack = [];
    lay.multi = multi;
    // [position, indent, justBranched, showConnector, isLast, gutters, virtualRootChild]
    for (var r = roots.length - 1; r >= 0; r--) stack.push([roots[r], multi ? 1 : 0, multi, multi, r === roots.length - 1, [], multi]);
    while (stack.length) {
      var it = stack.pop(), pos = it[0], indent = it[1], gut = it[5];
      lay.indent[pos] = indent;
      lay.bits[pos] = (it[3] ? 1 : 0) | (it[4] ? 2 : 0) | (it[6] ? 4 : 0);
      lay.gutters[pos] = gut;
      var ch = kids.get(pos) || [], forks = ch.length > 1;
      var childIndent = forks || (it[2] && indent > 0) ? indent + 1 : indent;
      var childGut = gut;
      if (it[3] && !it[6]) {
        var shown = multi ? Math.max(0, indent - 1) : indent;
        childGut = gut.concat([[Math.max(0, shown - 1), !it[4]]]);
      }
      for (var c = ch.length - 1; c >= 0; c--) stack.push([ch[c], childIndent, forks, forks, c === ch.length - 1, childGut, false]);
    }
  }
  function treePrefix(p) {
    var bits = lay.bits[p], shown = lay.multi ? Math.max(0, lay.indent[p] - 1) : lay.indent[p];
    var connector = (bits & 1) && !(bits & 4), at = connector ? shown - 1 : -1, gut = lay.gutters[p] || [], out = "";
    for (var level = 0; level < shown; level++) {
      var g = null;
      for (var x = 0; x < gut.length; x++) if (gut[x][0] === level) { g = gut[x]; break; }
      if (g) out += g[1] ? "│  " : "   ";
      else if (level === at) out += (bits & 2 ? "└─ " : "├─ ");
      else out += "   ";
    }
    return out;
  }
  function rowHtml(p) {
    var k = kindOf(p), m = mark[p], e = entry(p);
    var cls = "row" + (m ? (m & 2 ? " on-path in-ctx" : " on-path") : "") + (p === selected ? " selected" : "");
    var lab = META.labels[p] !== undefined ? '<span class="label">' + esc(META.labels[p]) + "</span>" : "";
    return '<div class="' + cls + '" role="treeitem" data-tree-id="' + esc(idText(p)) + '" data-pos="' + p +
      '"><span class="gut">' + treePrefix(p) + '</span><span class="kind ' + esc(k[0]) + '">' + esc(k[1]) + "</span>" + lab +
      esc(oneLine(preview(e), 140)) + "</div>";
  }
  function drawTree(force) {
    if (!loaded) return;
    var tree = document.getElementById("tree"), rows = document.getElementById("tree-rows");
    var h = tree.clientHeight || 600, maxTop = Math.max(0, visLen * ROW_H - h);
    // A filter that shrank the list: the old rows still hold the scroll height up, so clamp here
    // rather than wait for a scroll event that may never come.
    if (tree.scrollTop > maxTop) tree.scrollTop = maxTop;
    var top = tree.scrollTop;
    var from = Math.max(0, Math.floor(top / ROW_H) - MARGIN), to = Math.min(visLen, Math.ceil((top + h) / ROW_H) + MARGIN);
    if (!force && from === drawn[0] && to === drawn[1]) return;
    drawn = [from, to];
    var html = [];
    for (var i = from; i < to; i++) html.push(rowHtml(vis[i]));
    rows.style.top = from * ROW_H + "px";
    rows.innerHTML = html.join("");
  }
  // Keep the selected row shown whatever the filter: a new selection re-checks two rows.
  function refilterRow(p) {
    if (p < 0) return false;
    return passes(p) !== (visAt[p] >= 0);
  }
  function scrollRowIntoView(p) {
    var at = visAt[p];
    if (at < 0) return;
    var tree = document.getElementById("tree"), y = at * ROW_H, h = tree.clientHeight;
    // A row a step out of view scrolls in at the edge; one far away is brought to the middle.
    if (y < tree.scrollTop - 4 * ROW_H || y > tree.scrollTop + h + 3 * ROW_H) tree.scrollTop = Math.max(0, y - h / 2);
    else if (y < tree.scrollTop) tree.scrollTop = y;
    else if (y + ROW_H > tree.scrollTop + h) tree.scrollTop = y + ROW_H - h;
  }

  // -- transcript ---------------------------------------------------------------------------
  // Message text as a small, safe Markdown: paragraphs, headings, lists, quotes, code fences,
  // inline code, emphasis and links. Every piece of text goes through esc(); a link becomes an
  // <a> only for http(s) addresses (rel="noopener noreferrer"), and images are never fetched
  // (their alt text and address are shown instead).
  // One left-to-right pass: at each position the first construct that matches wins (code,
  // image, link, strong, emphasis), as a regex alternation would; where each construct closes
  // is looked up in tables made by one right-to-left pass, and nested text (a link's words,
  // emphasis) is scanned once, inside its range, with an explicit stack: linear in the text,
  // however many delimiters never close (a regex search for each closer was quadratic).
  function isSpace(c) {
    return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
  }
  function isWord(c) { return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95; }
  function inlineTables(s) {
    var n = s.length, t = {
      em42: new Int32Array(n + 1), em95: new Int32Array(n + 1), strong42: new Int32Array(n + 1), strong95: new Int32Array(n + 1),
      bracket: new Int32Array(n + 1), paren: new Int32Array(n + 1), run: new Int32Array(n + 1), sameRun: new Int32Array(n + 1),
    };
    var em42 = n, em95 = n, st42 = n, st95 = n, br = n, pa = n, runs = new Map();
    t.em42[n] = t.em95[n] = t.strong42[n] = t.strong95[n] = t.bracket[n] = t.paren[n] = n;
    for (var j = n - 1; j >= 0; j--) {
      var c = s.charCodeAt(j), before = j > 0 && !isSpace(s.charCodeAt(j - 1)), next = j + 1 < n ? s.charCodeAt(j + 1) : -1;
      if ((c === 42 || c === 95) && before) {
        // An emphasis closer: not followed by a word character or '*'; a strong one: doubled.
        if (!(next >= 0 && (isWord(next) || next === 42))) { if (c === 42) em42 = j; else em95 = j; }
        if (next === c) { if (c === 42) st42 = j; else st95 = j; }
      }
      if (c === 93 || c === 10) br = j;
      if (c === 41 || isSpace(c)) pa = j;
      t.em42[j] = em42; t.em95[j] = em95; t.strong42[j] = st42; t.strong95[j] = st95; t.bracket[j] = br; t.paren[j] = pa;
      // Backtick runs: at a run's first backtick, its length and where the next run as long starts.
      if (c === 96 && (j === 0 || s.charCodeAt(j - 1) !== 96)) {
        var len = 1;
        while (j + len < n && s.charCodeAt(j + len) === 96) len++;
        t.run[j] = len;
        var later = runs.get(len);
        t.sameRun[j] = later === undefined ? -1 : later;
        runs.set(len, j);
      }
    }
    return t;
  }
  function mdInline(s) {
    var n = s.length;
    if (!/[`!\[*_]/.test(s)) return esc(s);
    var t = inlineTables(s), out = [], stack = [], i = 0, to = n, last = 0;
    // Enter the range [a, b) wrapped in open/close; go on at r (in the range that ends at to).
    function enter(open, a, b, close, r) {
      out.push(esc(s.slice(last, i)), open);
      stack.push([to, close, r]);
      i = last = a; to = b;
    }
    for (;;) {
      if (i >= to) {
        out.push(esc(s.slice(last, to)));
        if (!stack.length) break;
        var f = stack.pop();
        out.push(f[1]);
        to = f[0]; i = last = f[2];
        continue;
      }
      var c = s.charCodeAt(i), j, u;
      if (c === 96 && t.run[i]) {  // `code`: closed by the next run of as many backticks
        var len = t.run[i], k = t.sameRun[i];
        if (k >= 0 && k + len <= to) {
          out.push(esc(s.slice(last, i)), "<code>" + esc(s.slice(i + len, k)) + "</code>");
          i = last = k + len;
        } else i += len;  // a run that never closes is text
        continue;
      }
      if (c === 33 && s.charCodeAt(i + 1) === 91 && i + 1 < to) {  // ![alt](address): never fetched
        j = t.bracket[i + 2];
        if (j < to && s.charCodeAt(j) === 93 && s.charCodeAt(j + 1) === 40 && j + 1 < to) {
          u = t.paren[j + 2];
          if (u < to && s.charCodeAt(u) === 41) {
            out.push(esc(s.slice(last, i)), '<span class="md-img">[image: ' + esc(s.slice(i + 2, j)) + " " + esc(s.slice(j + 2, u)) + "]</span>");
            i = last = u + 1;
            continue;
          }
        }
      }
      if (c === 91) {  // [words](address): a link only to http(s)
        j = t.bracket[i + 1];
        if (j > i + 1 && j < to && s.charCodeAt(j) === 93 && s.charCodeAt(j + 1) === 40 && j + 1 < to) {
          u = t.paren[j + 2];
          if (u > j + 2 && u < to && s.charCodeAt(u) === 41) {
            var href = s.slice(j + 2, u);
            if (/^https?:\/\//i.test(href)) enter('<a href="' + esc(href) + '" rel="noopener noreferrer" target="_blank">', i + 1, j, "</a>", u + 1);
            else enter("", i + 1, j, " (" + esc(href) + ")", u + 1);
            continue;
          }
        }
      }
      if ((c === 42 || c === 95) && i + 1 < to && !isSpace(s.charCodeAt(i + 1))) {
        var d = s.charCodeAt(i + 1);
        if (d === c && i + 2 < to && !isSpace(s.charCodeAt(i + 2))) {  // **strong** or __strong__
          j = (c === 42 ? t.strong42 : t.strong95)[Math.min(i + 3, n)];
          if (j + 1 < to) { enter("<strong>", i + 2, j, "</strong>", j + 2); continue; }
        }
        // *emphasis* or _emphasis_: the closer may not be followed by a word character or '*'
        // (the end of the enclosing range counts as nothing following).
        j = (c === 42 ? t.em42 : t.em95)[Math.min(i + 2, n)];
        if (j >= to - 1) j = to - 1 >= i + 2 && s.charCodeAt(to - 1) === c && !isSpace(s.charCodeAt(to - 2)) ? to - 1 : -1;
        if (j >= 0) { enter("<em>", i + 1, j, "</em>", j + 1); continue; }
      }
      i++;
    }
    return out.join("");
  }
  // Quotes nest at most this deep; deeper ones are shown as their text (each level reads its
  // lines again: a bound keeps a line of many '>' linear, and the stack small).
  var QUOTE_DEPTH = 16;
  function markdown(text, depth) {
    text = String(text);
    depth = depth || 0;
    if (text.length > 200000 || depth > QUOTE_DEPTH) return '<div class="text">' + esc(text) + "</div>";
    var lines = text.split("\n"), out = [], para = [], list = null, item = null, i = 0;
    // The open list item's pieces (its continuation lines are added to it, not to a string
    // rebuilt per line).
    function closeItem() { if (item) { out.push("<li>" + item.join(" ") + "</li>"); item = null; } }
    function flush() {
      closeItem();
      if (para.length) { out.push("<p>" + mdInline(para.join("\n")) + "</p>"); para = []; }
      if (list) { out.push("</" + list + ">"); list = null; }
    }
    while (i < lines.length) {
      var line = lines[i], m;
      if ((m = /^\s{0,3}(`{3,}|~{3,})\s*([\w+.-]*)/.exec(line))) {
        flush();
        var fence = m[1], code = [];
        for (i++; i < lines.length && lines[i].trim().indexOf(fence) !== 0; i++) code.push(lines[i]);
        i++;
        out.push("<pre>" + highlight(code.join("\n"), m[2] ? "x." + m[2] : "") + "</pre>");
        continue;
      }
      if (/^\s*$/.test(line)) { flush(); i++; continue; }
      if ((m = /^\s{0,3}(#{1,6})\s+(.*)$/.exec(line))) {
        flush();
        var level = Math.min(6, m[1].length + 2);
        out.push("<h" + level + ">" + mdInline(m[2].replace(/\s#+\s*$/, "")) + "</h" + level + ">");
        i++; continue;
      }
      if ((m = /^\s{0,3}>\s?(.*)$/.exec(line))) {
        flush();
        var quote = [];
        for (; i < lines.length && (m = /^\s{0,3}>\s?(.*)$/.exec(lines[i])); i++) quote.push(m[1]);
        out.push("<blockquote>" + markdown(quote.join("\n"), depth + 1) + "</blockquote>");
        continue;
      }
      if ((m = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line))) {
        var kind = /\d/.test(m[1]) ? "ol" : "ul";
        if (para.length || list !== kind) { flush(); out.push("<" + kind + ">"); list = kind; }
        closeItem();
        item = [mdInline(m[2])];
        i++; continue;
      }
      if (list && /^\s{2,}\S/.test(line)) { item.push(mdInline(line.trim())); i++; continue; }
      if (list) flush();
      para.push(line);
      i++;
    }
    flush();
    return '<div class="md">' + out.join("") + "</div>";
  }
  var KEYWORDS = /^(?:function|return|const|let|var|if|else|for|while|do|switch|case|break|continue|class|def|import|from|export|as|new|try|catch|finally|throw|raise|async|await|yield|with|in|of|is|not|and|or|None|True|False|null|true|false|undefined|this|self|public|private|static|fn|pub|impl|struct|enum|type|interface|package|func|go|defer|lambda|elif|except|pass)$/;
  function highlight(code, path) {
    var hash = /\.(py|sh|bash|zsh|rb|pl|toml|ya?ml|r)$/i.test(path || "") || /^(Makefile|Dockerfile)$/.test(String(path || "").split("/").pop());
    // A block comment or template string that never closes runs to the end of the code (as in
    // an editor); a quoted string must close on its line within 500 characters. Either way each
    // opener is searched from at most once, or a bounded distance: no quadratic rescans.
    var re = hash
      ? /(#[^\n]*)|("(?:[^"\\\n]|\\.){0,500}"|'(?:[^'\\\n]|\\.){0,500}')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g
      : /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|("(?:[^"\\\n]|\\.){0,500}"|'(?:[^'\\\n]|\\.){0,500}'|`(?:[^`\\]|\\[\s\S])*(?:`|$))|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;
    var out = [], last = 0, m;
    if (code.length > 200000) return esc(code);
    while ((m = re.exec(code)) !== null) {
      out.push(esc(code.slice(last, m.index)));
      if (m[1]) out.push('<span class="c">' + esc(m[1]) + "</span>");
      else if (m[2]) out.push('<span class="s">' + esc(m[2]) + "</span>");
      else if (m[3]) out.push('<span class="n">' + esc(m[3]) + "</span>");
      else if (KEYWORDS.test(m[4])) out.push('<span class="k">' + esc(m[4]) + "</span>");
      else out.push(esc(m[4]));
      last = re.lastIndex;
    }
    out.push(esc(code.slice(last)));
    return out.join("");
  }
  // ANSI SGR colours to spans; every other escape sequence is dropped.
  var ANSI16 = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"];
  function color256(n) {
    if (n < 16) return ANSI16[n];
    if (n < 232) { n -= 16; var s = [0, 95, 135, 175, 215, 255]; return "rgb(" + s[Math.floor(n / 36)] + "," + s[Math.floor(n / 6) % 6] + "," + s[n % 6] + ")"; }
    var g = 8 + (n - 232) * 10; return "rgb(" + g + "," + g + "," + g + ")";
  }
  function ansi(text) {
    if (text.indexOf("\u001b") < 0) return esc(text);
    var out = [], st = {}, re = /\u001b\[([0-9;]*)m|\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b./g;
    var last = 0, m, open = false;
    function span() {
      if (open) out.push("</span>");
      var cls = [], style = [];
      if (st.b) cls.push("ansi-b"); if (st.i) cls.push("ansi-i"); if (st.u) cls.push("ansi-u"); if (st.d) cls.push("ansi-d");
      if (st.fg) style.push("color:" + st.fg); if (st.bg) style.push("background:" + st.bg);
      open = cls.length > 0 || style.length > 0;
      if (open) out.push('<span class="' + cls.join(" ") + '" style="' + style.join(";") + '">');
    }
    while ((m = re.exec(text)) !== null) {
      out.push(esc(text.slice(last, m.index)));
      last = re.lastIndex;
      if (m[1] === undefined) continue;
      var codes = m[1] === "" ? [0] : m[1].split(";").map(Number);
      for (var i = 0; i < codes.length; i++) {
        var c = codes[i];
        if (c === 0) st = {};
        else if (c === 1) st.b = 1; else if (c === 2) st.d = 1; else if (c === 3) st.i = 1; else if (c === 4) st.u = 1;
        else if (c === 22) { st.b = 0; st.d = 0; } else if (c === 23) st.i = 0; else if (c === 24) st.u = 0;
        else if (c >= 30 && c <= 37) st.fg = ANSI16[c - 30]; else if (c >= 90 && c <= 97) st.fg = ANSI16[c - 82];
        else if (c >= 40 && c <= 47) st.bg = ANSI16[c - 40]; else if (c >= 100 && c <= 107) st.bg = ANSI16[c - 92];
        else if (c === 39) st.fg = null; else if (c === 49) st.bg = null;
        else if ((c === 38 || c === 48) && codes[i + 1] === 5 && codes[i + 2] >= 0 && codes[i + 2] < 256) {
          st[c === 38 ? "fg" : "bg"] = color256(codes[i + 2] | 0); i += 2;
        } else if ((c === 38 || c === 48) && codes[i + 1] === 2) {
          var rgb = codes.slice(i + 2, i + 5).map(function (x) { return Math.max(0, Math.min(255, x | 0)); });
          st[c === 38 ? "fg" : "bg"] = "rgb(" + rgb.join(",") + ")"; i += 4;
        }
      }
      span();
    }
    out.push(esc(text.slice(last)));
    if (open) out.push("</span>");
    return out.join("");
  }
  // A line diff (longest common subsequence; large inputs fall back to all-removed/all-added).
  function diff(a, b) {
    var x = String(a).split("\n"), y = String(b).split("\n"), out = [];
    var pre = 0;
    while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
    var suf = 0;
    while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
    var xs = x.slice(pre, x.length - suf), ys = y.slice(pre, y.length - suf);
    for (var i = Math.max(0, pre - 3); i < pre; i++) out.push(" " + "\u0000" + x[i]);
    if (xs.length * ys.length <= 250000) {
      var n = xs.length, m = ys.length, L = [];
      for (var r = 0; r <= n; r++) L.push(new Int32Array(m + 1));
      for (var p = n - 1; p >= 0; p--) for (var q = m - 1; q >= 0; q--)
        L[p][q] = xs[p] === ys[q] ? L[p + 1][q + 1] + 1 : Math.max(L[p + 1][q], L[p][q + 1]);
      var s = 0, t = 0;
      while (s < n || t < m) {
        if (s < n && t < m && xs[s] === ys[t]) { out.push(" \u0000" + xs[s]); s++; t++; }
        else if (t < m && (s >= n || L[s][t + 1] >= L[s + 1][t])) { out.push("+\u0000" + ys[t]); t++; }
        else { out.push("-\u0000" + xs[s]); s++; }
      }
    } else {
      xs.forEach(function (l) { out.push("-\u0000" + l); });
      ys.forEach(function (l) { out.push("+\u0000" + l); });
    }
    for (var k = x.length - suf; k < Math.min(x.length, x.length - suf + 3); k++) out.push(" \u0000" + x[k]);
    return '<pre class="diff">' + out.map(function (l) {
      var sign = l.charAt(0), body = l.slice(2);
      var cls = sign === "+" ? "add" : sign === "-" ? "del" : "";
      return '<div class="' + cls + '">' + esc(sign + " " + body) + "</div>";
    }).join("") + "</pre>";
  }
  function pre(text, cls) { return "<pre" + (cls ? ' class="' + cls + '"' : "") + ">" + esc(text) + "</pre>"; }
  function folded(title, inner, open) {
    return "<details" + (open ? " open" : "") + "><summary>" + esc(title) + "</summary>" + inner + "</details>";
  }
  function image(c) {
    var mime = typeof c.mimeType === "string" ? c.mimeType : "";
    if (/^image\/(png|jpeg|gif|webp)$/.test(mime) && typeof c.data === "string" && /^[A-Za-z0-9+/=\s]*$/.test(c.data) && c.data.length)
      return '<img class="embedded" alt="image" src="data:' + mime + ";base64," + c.data.replace(/\s/g, "") + '">';
    return '<span class="image-placeholder">[image' + (mime ? " " + esc(mime) : "") + "]</span>";
  }
  function contentBlocks(content) {
    if (typeof content === "string") return markdown(content);
    if (!Array.isArray(content)) return content === undefined ? "" : pre(JSON.stringify(content, null, 2));
    return content.map(function (c) {
      if (!isObj(c)) return pre(JSON.stringify(c));
      if (c.type === "text") return markdown(c.text);
      if (c.type === "image") return image(c);
      if (c.type === "thinking") {
        var t = String(c.thinking || "");
        return folded("Thinking (" + fmt(t.length) + " characters)", pre(t));
      }
      if (c.type === "toolCall") return toolCall(c);
      return pre(JSON.stringify(c, null, 2));
    }).join("");
  }
  function toolCall(c) {
    var name = String(c.name), a = c.arguments, head = '<div class="tool-call"><span class="muted">Tool call</span> <code class="name">' + esc(name) + "</code>";
    var path = isObj(a) && typeof (a.path || a.file_path) === "string" ? String(a.path || a.file_path) : "";
    if (path) head += ' <span class="path">' + esc(path) + "</span>";
    var body;
    if (isObj(a) && name === "edit") {
      var edits = Array.isArray(a.edits) ? a.edits : [];
      if (typeof a.oldText === "string" && typeof a.newText === "string") edits = edits.concat([{ oldText: a.oldText, newText: a.newText }]);
      body = edits.length ? edits.map(function (ed) { return isObj(ed) ? diff(ed.oldText, ed.newText) : pre(JSON.stringify(ed)); }).join("") : pre(JSON.stringify(a, null, 2));
    } else if (isObj(a) && name === "write" && typeof a.content === "string") {
      body = "<pre>" + highlight(a.content, path) + "</pre>";
    } else if (isObj(a) && name === "bash" && typeof a.command === "string") {
      body = pre("$ " + a.command + (a.timeout ? "   (timeout " + a.timeout + "s)" : ""));
    } else if (isObj(a) && name === "read") {
      var range = [];
      if (a.offset !== undefined) range.push("from line " + a.offset);
      if (a.limit !== undefined) range.push(a.limit + " lines");
      body = range.length ? '<div class="muted">' + esc(range.join(", ")) + "</div>" : "";
    } else {
      body = pre(JSON.stringify(a, null, 2));
    }
    return head + body + "</div>";
  }
  // The tool call a result answers: looked for up the result's branch (where Pi's call is),
  // then, if not there, in every assistant reply (parsed once).
  function callIn(p, id) {
    var m = msgOf(entry(p));
    if (!m || m.role !== "assistant" || !Array.isArray(m.content)) return undefined;
    for (var i = 0; i < m.content.length; i++) { var c = m.content[i]; if (isObj(c) && c.type === "toolCall" && c.id === id) return c; }
    return undefined;
  }
  function callFor(id, pos) {
    var q = META.parent[pos], steps = 0;
    for (; q >= 0 && steps < 200; q = META.parent[q], steps++) {
      if ((META.flags[q] & F_MESSAGE) && META.kinds[q] === "assistant") { var c = callIn(q, id); if (c) return c; }
    }
    if (early) return undefined;  // the page is still loading: no full scan yet
    if (!callArgs) {
      callArgs = new Map();
      for (var i = 0; i < COUNT; i++) {
        if (!((META.flags[i] & F_MESSAGE) && META.kinds[i] === "assistant")) continue;
        var m = msgOf(entry(i));
        if (m && Array.isArray(m.content))
          m.content.forEach(function (c2) { if (isObj(c2) && c2.type === "toolCall" && !callArgs.has(c2.id)) callArgs.set(c2.id, c2); });
      }
    }
    return callArgs.get(id);
  }
  function toolResult(m, pos) {
    var call = callFor(m.toolCallId, pos), a = call && isObj(call.arguments) ? call.arguments : {};
    var text = textOf(m.content), images = Array.isArray(m.content) ? m.content.filter(function (c) { return isObj(c) && c.type === "image"; }) : [];
    var lines = text ? text.split("\n").length : 0, html;
    var cls = m.isError ? "error" : "";
    if (!m.isError && m.toolName === "read" && text) {
      var path = String(a.path || a.file_path || "");
      html = '<div class="path">' + esc(path) + "</div><pre>" + highlight(text, path) + "</pre>";
    } else if (m.toolName === "bash") {
      html = '<pre class="' + cls + '">' + ansi(text) + "</pre>";
    } else html = text ? pre(text, cls) : "";
    if (lines > 40) html = folded("Output: " + fmt(lines) + " lines, " + fmt(text.length) + " characters", html);
    return html + images.map(image).join("");
  }
  function entryBody(e, pos) {
    if (!isObj(e)) return pre(JSON.stringify(e));
    var m = msgOf(e);
    if (m) {
      if (m.role === "toolResult") return toolResult(m, pos);
      if (m.role === "bashExecution") {
        return pre("$ " + String(m.command)) + '<pre class="' + (m.exitCode ? "error" : "") + '">' + ansi(String(m.output || "")) + "</pre>" +
          '<div class="muted">' + esc("exit code " + String(m.exitCode) + (m.cancelled ? ", cancelled" : "") + (m.truncated ? ", truncated" : "")) + "</div>";
      }
      var extra = "";
      if (m.role === "assistant" && m.errorMessage) extra = pre(String(m.errorMessage), "error");
      return contentBlocks(m.content) + extra;
    }
    switch (e.type) {
      case "compaction":
        return '<div class="muted">' + esc("Summarized " + fmt(e.tokensBefore) + " tokens; kept from " + String(e.firstKeptEntryId)) + "</div>" +
          markdown(e.summary || "");
      case "branch_summary":
        return '<div class="muted">' + esc("Summary of the branch left at " + String(e.fromId)) + "</div>" + markdown(e.summary || "");
      case "custom_message":
        return contentBlocks(e.content);
      case "custom":
        return e.data === undefined ? "" : folded("Data", pre(JSON.stringify(e.data, null, 2)));
      case "context_edit":
        return e.replacement === null ? "" : folded("Replacement", pre(JSON.stringify(e.replacement, null, 2)));
      default: return "";
    }
  }
  var EVENTS = ["model_change", "thinking_level_change", "label", "session_info", "custom", "context_edit"];
  function entryHead(p, region) {
    var e = entry(p), m = msgOf(e), k = kindOf(p), bits = [];
    var title = m ? (m.role === "toolResult" ? "Tool result: " + String(m.toolName) : k[1]) : k[1];
    if (m && m.role === "assistant" && (m.provider || m.model)) bits.push(String(m.provider || "") + "/" + String(m.model || ""));
    if (!m && EVENTS.indexOf(e && e.type) >= 0) title += ": " + oneLine(preview(e), 120);
    var tok = META.tokens[p], usage = m && m.role === "assistant" && isObj(m.usage) ? m.usage : null;
    var right = [];
    if (usage) {
      right.push(fmt(usage.input) + " in · " + fmt(usage.output) + " out" + (usage.cacheRead ? " · " + fmt(usage.cacheRead) + " cached" : ""));
      var c = costOf(m); if (c) right.push(money(c));
    }
    if (tok) right.push("~" + fmt(tok) + " tok");
    var lab = META.labels[p] !== undefined ? '<span class="label">' + esc(META.labels[p]) + "</span>" : "";
    var when = isObj(e) && typeof e.timestamp === "string" ? timeHtml(e.timestamp) : "";
    var badge = region ? '<span class="badge region-' + esc(region) + '">' + esc(region) + "</span>" : "";
    return '<header><span class="title">' + esc(title) + "</span><code>" + esc(idText(p)) + "</code>" + when + lab + badge +
      (bits.length ? '<span>' + esc(bits.join(" ")) + "</span>" : "") + '<span class="tok">' + esc(right.join(" · ")) + "</span></header>";
  }
  function fillBody(article) {
    if (article.dataset.filled) return;
    article.dataset.filled = "1";
    var p = +article.dataset.pos, div = document.createElement("div");
    try { div.innerHTML = entryBody(entry(p), p); } catch (err) { div.innerHTML = pre("(this entry cannot be shown: " + String(err && err.message) + ")", "error"); }
    article.appendChild(div);
  }
  function regionsFor(path, replay) {
    var out = new Array(path.length);
    if (!replay || !replay.plan) return out;
    var i = 0;
    replay.plan.regions.forEach(function (run) { for (var k = 0; k < run[1] && i < path.length; k++) out[i++] = run[0]; });
    return out;
  }
  // The transcript draws the last FIRST entries of the path; earlier ones come CHUNK at a time
  // when scrolled to (or asked for), and entry bodies are drawn as they near the viewport.
  var FIRST = 60, CHUNK = 200, tState = null;
  function articleHtml(i) {
    var t = tState, p = t.path[i], k = kindOf(p), inc = t.inCtx.has(p);
    var cls = k[0] + (!(META.flags[p] & F_MESSAGE) && EVENTS.indexOf(META.kinds[p]) >= 0 ? " event" : "") + (inc ? "" : " out") + (p === t.pos ? " selected" : "");
    var status = inc ? ' data-in-context="true"' : ' data-context="' + (t.ctx.compIdx >= 0 && i < t.ctx.compIdx ? "summarized" : "omitted") + '"';
    var region = t.replay && t.replay.plan && t.replay.plan.wouldCompact ? t.regions[i] : (inc ? "" : "summarized away");
    return '<article class="' + esc(cls) + '" data-entry-id="' + esc(idText(p)) + '" data-pos="' + p + '"' + status + ">" + entryHead(p, region) + "</article>";
  }
  function watchBodies(list) {
    if (!observer) {
      for (var j = 0; j < list.length; j++) fillBody(list[j]);
      return;
    }
    for (var a = 0; a < list.length; a++) observer.observe(list[a]);
  }
  function earlierText(n) { return "Show " + fmt(Math.min(n, CHUNK)) + " earlier entries (" + fmt(n) + " before these)"; }
  function showEarlier(all) {
    var t = tState, btn = document.getElementById("earlier"), main = document.getElementById("main");
    if (!t || !btn || t.first <= 0) return;
    var from = all === true ? 0 : Math.max(0, t.first - CHUNK), html = [];
    for (var i = from; i < t.first; i++) html.push(articleHtml(i));
    var before = main.scrollHeight, top = main.scrollTop;
    var holder = document.createElement("div");
    holder.innerHTML = html.join("");
    var added = Array.prototype.slice.call(holder.children);
    var frag = document.createDocumentFragment();
    added.forEach(function (el) { frag.appendChild(el); });
    btn.parentNode.insertBefore(frag, btn.nextSibling);
    t.first = from;
    if (from > 0) btn.textContent = earlierText(from);
    else btn.parentNode.removeChild(btn);
    watchBodies(added);
    main.scrollTop = top + (main.scrollHeight - before);
  }
  function renderTranscript(pos) {
    var path = pathTo(pos), ctx = contextAt(pos, path), inCtx = new Set(ctx.order);
    var replay = META.replays[String(pos)];
    tState = { path: path, ctx: ctx, inCtx: inCtx, replay: replay, regions: regionsFor(path, replay), pos: pos, first: Math.max(0, path.length - FIRST) };
    if (early) {  // only the entries of the first view are at hand yet
      var have = path.length;
      while (have > tState.first && PARSED[path[have - 1]] !== undefined) have--;
      tState.first = have;
    }
    ctxState = tState;
    var html = [tState.first > 0 && !early ? '<button id="earlier" type="button">' + earlierText(tState.first) + "</button>" : ""];
    for (var i = tState.first; i < path.length; i++) html.push(articleHtml(i));
    var tr = document.getElementById("transcript");
    if (observer) { observer.disconnect(); observer = null; }
    tr.innerHTML = html.join("");
    var arts = Array.prototype.slice.call(tr.querySelectorAll("article"));
    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver(function (items) {
        items.forEach(function (it) {
          if (!it.isIntersecting) return;
          if (it.target.id === "earlier") showEarlier();
          else { fillBody(it.target); observer.unobserve(it.target); }
        });
      }, { root: document.getElementById("main"), rootMargin: "1500px 0px" });
    }
    // The last entries' bodies now: the end of the path is what shows first.
    for (var f = Math.max(0, arts.length - 8); f < arts.length; f++) fillBody(arts[f]);
    watchBodies(arts);
    var btn = document.getElementById("earlier");
    if (btn) {
      btn.addEventListener("click", showEarlier);
      if (observer) observer.observe(btn);
    }
    renderSummary(pos, path, ctx, replay);
    var last = arts[arts.length - 1];
    if (last && last.scrollIntoView) last.scrollIntoView({ block: "end" });
    // The tree marks: the old path's cleared, the new one's set (2: in Pi's context).
    for (var r = 0; r < marked.length; r++) mark[marked[r]] = 0;
    marked = path;
    for (var s = 0; s < path.length; s++) mark[path[s]] = inCtx.has(path[s]) ? 2 : 1;
  }
  var marked = [];
  // The request check pitools ran when it made the page: the body pi-ai would send the model Pi
  // resumes with at the page's first leaf, against each provider rule (pitools request --check).
  function checkHtml() {
    var c = META.check;
    if (!isObj(c)) return "";
    var head = "Request check" + (c.model ? " for " + String(c.model) : "") + " at " + String(c.leafId) + ": ";
    if (c.error) return '<div id="check" class="muted" data-ok="unknown">' + esc(head + "not built (" + String(c.error) + ")") + "</div>";
    var list = Array.isArray(c.findings) ? c.findings : [];
    if (!list.length) return '<div id="check" data-ok="true">' + esc(head) + "✓ no provider rule is broken</div>";
    var items = list.map(function (f) {
      return "<li><b>" + esc(f.severity) + "</b> <code>" + esc(f.code) + "</code>" + (f.path ? " at " + esc(f.path) : "") + ": " + esc(f.message) + "</li>";
    }).join("");
    var fix = c.heal ? '<div>fix: <code class="cmd">' + esc(c.heal) + "</code></div>" : "";
    return '<div id="check" data-ok="' + (c.ok ? "true" : "false") + '"><details><summary>' + esc(head + (c.ok ? "" : "✗ ") + list.length + (list.length === 1 ? " finding" : " findings")) +
      "</summary><ul>" + items + "</ul>" + fix + "</details></div>";
  }
  function renderSummary(pos, path, ctx, replay) {
    var assistants = cumReplies[pos], calls = cumCalls[pos], tokens = cumTok[pos], cost = cumCost[pos];
    if (path[0] !== undefined && META.parent[path[0]] >= 0) { assistants = 0; calls = 0; tokens = 0; cost = 0; path.forEach(function (p) { assistants += META.kinds[p] === "assistant" && (META.flags[p] & F_MESSAGE) ? 1 : 0; calls += META.calls[p]; tokens += META.usageTotal[p]; cost += META.cost[p]; }); }
    var window_ = replay ? replay.contextWindow : (META.replays[String(META.defaultLeaf)] || {}).contextWindow;
    // Pi's estimateProjectedContextTokens here, as pitools worked it out (ctxTokens).
    var total = META.ctxTokens[pos], exact = !(META.flags[pos] & F_ESTIMATED);
    var pct = window_ ? total / window_ * 100 : null;
    var parts = ['<div><b>Context at ' + esc(idText(pos)) + "</b>: " + fmt(ctx.order.length) + " of " + fmt(path.length) +
      " entries on the path" + (ctx.compIdx >= 0 ? " (" + fmt(path.length - ctx.order.length) + " summarized away by the compaction at " + esc(idText(path[ctx.compIdx])) + ")" : "") + "</div>"];
    parts.push('<div id="ctx-total" data-tokens="' + total + '" data-exact="' + (exact ? "true" : "false") + '">' + (exact ? "" : "≈ ") + fmt(total) + " tokens" +
      (window_ ? " of a " + fmt(window_) + "-token window (" + pct.toFixed(1) + "%)" : "") +
      (exact ? "" : ' <span class="muted">(estimated: this entry is past the budget of exact replays)</span>') + "</div>");
    if (window_) parts.push('<div class="bar' + (pct > 100 ? " over" : "") + '"><div style="width:' + Math.min(100, pct).toFixed(1) + '%"></div></div>');
    if (replay && replay.plan) {
      var pl = replay.plan, t = pl.totals || {};
      parts.push('<div id="ctx-plan" data-first-kept="' + esc(pl.firstKeptEntryId === null ? "" : pl.firstKeptEntryId) + '" data-would-compact="' + pl.wouldCompact + '">' + (pl.wouldCompact ? "<b>Pi would compact here</b> (over the " + fmt(pl.threshold) + "-token threshold): " :
        "Compaction plan here (not due: threshold " + fmt(pl.threshold) + " tokens): ") +
        (pl.reason ? esc(pl.reason) : esc("summarize " + fmt(t.summarize || 0) + " tokens" + (pl.isSplitTurn ? ", turn prefix " + fmt(t["turn-prefix"] || 0) : "") +
          ", keep " + fmt(t.kept || 0) + " from " + String(pl.firstKeptEntryId))) + "</div>");
    } else {
      parts.push('<div class="muted">The compaction plan is shown at the leaves (select a branch tip).</div>');
    }
    parts.push(checkHtml());
    parts.push('<div class="muted">This branch: ' + fmt(assistants) + (assistants === 1 ? " reply, " : " replies, ") + fmt(calls) + (calls === 1 ? " tool call, " : " tool calls, ") + fmt(tokens) + " tokens" +
      (cost ? ", " + money(cost) : "") + "</div>");
    document.getElementById("summary").innerHTML = parts.join("");
  }

  // -- selection, keys, page ----------------------------------------------------------------
  function select(pos, fromUser) {
    if (!loaded || pos < 0 || pos >= COUNT) return;
    if (fromUser) followDefault = false;
    var before = selected;
    selected = pos;
    renderTranscript(pos);
    if (refilterRow(before) || refilterRow(pos)) applyFilter();
    else drawTree(true);
    scrollRowIntoView(pos);
    drawTree(false);
    var id = idText(pos);
    if (fromUser && history.replaceState) history.replaceState(null, "", "#leaf=" + encodeURIComponent(id));
  }
  function fromHash() {
    var m = /(?:^#|&)leaf=([^&]*)/.exec(location.hash);
    if (!m) return -1;
    var id;
    try { id = decodeURIComponent(m[1]); } catch (err) { return -1; }
    return posOfId(id);
  }
  // The next visible row up or down the tree (delta ±n), or the first/last (±Infinity).
  function move(delta) {
    if (!visLen) return;
    var at = selected >= 0 ? visAt[selected] : -1, target;
    if (!isFinite(delta)) target = delta > 0 ? visLen - 1 : 0;
    else target = at < 0 ? 0 : Math.max(0, Math.min(visLen - 1, at + delta));
    var p = vis[target];
    if (p === selected) return;
    select(p, true);
  }
  function setTheme(t) {
    document.documentElement.setAttribute("data-theme", t);
    try { localStorage.setItem("pitools-theme", t); } catch (err) { /* file pages may have no storage */ }
  }
  function skeleton() {
    var h = META.header || {}, filters = [["default", "Default"], ["no-tools", "No tools"], ["user-only", "User"], ["labeled-only", "Labeled"], ["all", "All"]];
    // Served pages lead back to the session list; the title is the session's name (as Pi lists it).
    var back = META.live && META.live.home ? '<a id="back" href="' + esc(META.live.home) + '" title="all sessions">← sessions</a>' : "";
    app.innerHTML = '<div id="top">' + back + '<h1 title="' + esc("session " + String(h.id)) + '">' + esc(META.name || "Session " + String(h.id)) + '</h1><span class="facts">' +
      esc([String(h.cwd || ""), "session " + String(h.id)].join(" · ")) + (typeof h.timestamp === "string" ? " · " + timeHtml(h.timestamp) : "") +
      " · " + esc(META.file) + '</span><span class="spacer"></span>' +
      '<span class="muted"><kbd>↑</kbd><kbd>↓</kbd> move · <kbd>/</kbd> search · <kbd>t</kbd> theme</span> ' +
      '<button id="theme" type="button">Theme</button></div>' +
      '<nav id="side"><div class="controls">' + filters.map(function (f) {
        return '<button type="button" class="filter' + (f[0] === filterMode ? " active" : "") + '" data-filter="' + f[0] + '">' + f[1] + "</button>";
      }).join("") + '<input type="search" id="search" placeholder="Search the tree" aria-label="Search the tree"></div>' +
      '<div id="tree-status"></div><div id="tree" role="tree" tabindex="0"><div id="tree-space"><div id="tree-rows"></div></div></div></nav>' +
      '<main id="main"><div id="summary"></div><div id="transcript"></div></main>';
    var tree = document.getElementById("tree");
    tree.addEventListener("click", function (ev) {
      var row = ev.target.closest && ev.target.closest(".row");
      if (row) select(+row.dataset.pos, true);
    });
    tree.addEventListener("scroll", function () { drawTree(false); }, { passive: true });
    window.addEventListener("resize", function () { drawTree(false); });
    Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (b) {
      b.addEventListener("click", function () {
        filterMode = b.dataset.filter;
        Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (x) { x.classList.toggle("active", x === b); });
        applyFilter();
        scrollRowIntoView(selected);
        drawTree(false);
      });
    });
    var search = document.getElementById("search"), timer = 0;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { query = search.value.toLowerCase().trim(); applyFilter(); }, 120);
    });
    document.getElementById("theme").addEventListener("click", function () {
      setTheme(document.documentElement.getAttribute("data-theme") === "dark" ? "light" : "dark");
    });
  }
  document.addEventListener("keydown", function (ev) {
    var inField = ev.target && ev.target.tagName === "INPUT";
    if (ev.key === "Escape" && inField) { ev.target.value = ""; query = ""; applyFilter(); ev.target.blur(); return; }
    if (inField || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "ArrowDown" || ev.key === "j") { move(1); ev.preventDefault(); }
    else if (ev.key === "ArrowUp" || ev.key === "k") { move(-1); ev.preventDefault(); }
    else if (ev.key === "Home") { move(-Infinity); ev.preventDefault(); }
    else if (ev.key === "End") { move(Infinity); ev.preventDefault(); }
    else if (ev.key === "PageDown") { move(20); ev.preventDefault(); }
    else if (ev.key === "PageUp") { move(-20); ev.preventDefault(); }
    else if (ev.key === "/") { document.getElementById("search").focus(); ev.preventDefault(); }
    else if (ev.key === "t") { document.getElementById("theme").click(); }
  });
  window.addEventListener("hashchange", function () { var p = fromHash(); if (p >= 0 && p !== selected) { followDefault = false; select(p, false); } });

  function mark_(name) { document.documentElement.setAttribute(name, String(Math.round(performance.now()))); }
  // The transcript first, then the tree. The script runs before the entries' block is parsed:
  // when the page opens on its initial entry, the first view's entries (in the read model) draw
  // the end of the transcript at once; once the document is parsed, every entry is read, the
  // transcript drawn again in full and the tree built.
  function start(meta) {
    load(meta, []);
    var p = fromHash();
    if (p >= 0) followDefault = false;
    selected = p >= 0 ? p : META.initialLeaf;
    if (meta.firstView && selected === META.initialLeaf && selected >= 0 && PARSED[selected] !== undefined) {
      early = true;
      renderTranscript(selected);
      early = false;
      mark_("data-transcript-ms");
      requestAnimationFrame(function () { mark_("data-transcript-frame-ms"); });  // the next frame: painted
    }
    var rest = function () {
      RAW = splitLines(document.getElementById("pt-entries").textContent, []);
      loaded = true;
      mark_("data-data-ms");
      if (selected >= 0 && selected < COUNT) renderTranscript(selected);
      if (!document.documentElement.hasAttribute("data-transcript-ms")) mark_("data-transcript-ms");
      setTimeout(function () {
        applyFilter();
        scrollRowIntoView(selected);
        drawTree(false);  // now, not on the scroll event: the selected row is in the DOM when ready
        mark_("data-ready-ms");
        document.documentElement.setAttribute("data-ready", "true");
      }, 0);
    };
    if (document.getElementById("pt-entries") && document.readyState !== "loading") rest();
    else document.addEventListener("DOMContentLoaded", rest);
  }
  // The whole tree's ids, for a test or a script: the row model the virtual tree draws from.
  window.pitoolsViewer = {
    rowIds: function () { var out = []; for (var i = 0; i < visLen; i++) out.push(idText(vis[i])); return out; },
    // Select by id as a click would (benchmarks time it); false if no entry has that id.
    select: function (id) { var p = posOfId(id); if (p < 0) return false; select(p, true); return true; },
    treeOrderIds: function () { return META.order.map(function (p) { return idText(p); }); },
    treeOrderKinds: function () { return META.order.map(function (p) { return META.kinds[p]; }); },
    // The shown rows' connector prefixes (as Pi's /tree draws them), in row order.
    rowPrefixes: function () { var out = []; for (var i = 0; i < visLen; i++) out.push(treePrefix(vis[i])); return out; },
    // Each shown row's nearest shown ancestor (null for a root of the shown tree), in row order.
    rowParents: function () {
      var out = [];
      for (var i = 0; i < visLen; i++) {
        var q = META.parent[vis[i]];
        while (q >= 0 && visAt[q] < 0 && orderIndex[q] < orderIndex[vis[i]]) q = META.parent[q];
        out.push(q >= 0 && visAt[q] >= 0 && orderIndex[q] < orderIndex[vis[i]] ? idText(q) : null);
      }
      return out;
    },
    rowHeight: ROW_H,
    // The Markdown renderer, for tests at its size cap.
    markdown: function (text) { return markdown(text); },
    // Every entry as the page parsed it (a test compares them with the file's values).
    entries: function () { var out = []; for (var i = 0; i < COUNT; i++) out.push(entry(i)); return out; },
  };
  var theme = null;
  try { theme = localStorage.getItem("pitools-theme"); } catch (err) { theme = null; }
  setTheme(theme || (window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  // Timings for benchmarks: when the script started, when the entries had been read
  // (data-data-ms), the transcript drawn (data-transcript-ms) and the tree (data-ready-ms).
  mark_("data-script-ms");
  var meta = JSON.parse(document.getElementById("pt-meta").textContent);
  META = meta;
  skeleton();
  start(meta);

  // -- live updates (pitools serve) ---------------------------------------------------------
  // The page polls its session's stamp (size and time of change); when it moves, it asks for
  // the entries after the ones it has, naming the bytes they came from (their length and
  // SHA-256, from the server): the server sends only the rest when the file still starts with
  // those bytes, else everything again (an in-place rewrite). Always with the read model.
  if (meta.live && window.fetch) {
    var stamp = meta.live.stamp, prefix = meta.live.prefix || null, delay = 1000;
    var poll = function () {
      fetch(meta.live.stampUrl, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s || s.stamp === stamp) return null;
          var url = meta.live.dataUrl;
          if (prefix && prefix.have === COUNT) url += (url.indexOf("?") < 0 ? "?" : "&") + "have=" + prefix.have + "&bytes=" + prefix.bytes + "&sha=" + encodeURIComponent(prefix.sha);
          return fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.ok ? r.text() : null; });
        })
        .then(function (body) {
          if (!body) return;
          // The first line is the head; no entry may follow it (a touch, a same-size rewrite).
          var nl = body.indexOf("\n");
          if (nl < 0) nl = body.length;
          var head = JSON.parse(body.slice(0, nl));
          var keep = followDefault ? -1 : selected, keepId = keep >= 0 ? idText(keep) : undefined;
          var raw = head.from > 0 && head.from === COUNT ? RAW : [], had = raw.length;
          splitLines(body.slice(nl + 1), raw);
          if (raw.length !== head.meta.ids.length) { raw.length = had; throw new Error("the update does not match its read model"); }
          stamp = head.stamp;
          prefix = head.prefix || null;
          load(head.meta, raw);
          if (META.name) { document.title = META.name + " · pi session"; document.querySelector("#top h1").textContent = META.name; }
          var p = keep >= 0 ? posOfId(keepId) : -1;
          selected = -1;
          select(p >= 0 ? p : META.initialLeaf, false);
          applyFilter();
          document.documentElement.setAttribute("data-updated", String(stamp));
          document.documentElement.setAttribute("data-update-from", String(head.from));
          delay = 1000;
        })
        // The server went away or sent what cannot be used: try again, less and less often.
        .catch(function () { delay = Math.min(delay * 2, 30000); })
        .then(function () { setTimeout(poll, delay); });
    };
    setTimeout(poll, delay);
  }
})();
