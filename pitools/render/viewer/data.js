  // -- data ---------------------------------------------------------------------------------
  function idText(p) { return META.ids[p]; }
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
  // worked out: the nearest entry of the path that META.compactions names cuts it into the
  // entry Pi puts first, the kept range before it (without system messages) and the rest.
  function contextAt(path) {
    var cut = null;
    for (var i = path.length - 1; i >= 0 && !cut; i--) cut = META.compactions[String(path[i])] || null;
    var ci = cut ? path.indexOf(cut[0]) : -1;
    if (ci < 0) return { order: path.slice(), compIdx: -1 };
    var start = path.indexOf(cut[1]);
    if (start < 0 || start > ci) start = ci;
    var order = [path[ci]];
    for (var a = start; a < ci; a++) if (!isSystemMessage(path[a])) order.push(path[a]);
    for (var b = ci + 1; b < path.length; b++) order.push(path[b]);
    return { order: order, compIdx: ci };
  }
