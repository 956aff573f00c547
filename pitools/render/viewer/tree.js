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
