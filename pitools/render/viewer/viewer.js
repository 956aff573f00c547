// pitools session viewer: draws the tree, the transcript and Pi's context at the selected entry
// from the JSON embedded in the page. No network (except polling its own server under
// `pitools serve`), no eval, no innerHTML of anything that was not escaped by esc().
"use strict";
(function () {
  var META, ENTRIES, byId, searchText, callArgs;
  var filterMode = "default", query = "", selected = -1, followDefault = true;
  var rows = [], orderIndex = [], observer = null;
  var ctxState = null;
  var app = document.getElementById("app");

  // -- helpers ------------------------------------------------------------------------------
  function esc(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function idText(e) {
    if (!isObj(e)) return "";
    var id = e.id;
    if (typeof id === "string") return id;
    return id === undefined ? "" : JSON.stringify(id);
  }
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
  function oneLine(s, n) {
    s = String(s).replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }
  function usageTotal(u) {
    if (!isObj(u)) return 0;
    var t = 0;
    ["input", "output", "cacheRead", "cacheWrite"].forEach(function (k) { if (typeof u[k] === "number") t += u[k]; });
    return t;
  }
  function costOf(m) {
    return m && isObj(m.usage) && isObj(m.usage.cost) && typeof m.usage.cost.total === "number" ? m.usage.cost.total : 0;
  }

  // -- data ---------------------------------------------------------------------------------
  function load(meta, entries) {
    META = meta; ENTRIES = entries; searchText = null; callArgs = null;
    byId = new Map();
    for (var i = 0; i < entries.length; i++) if (isObj(entries[i]) && "id" in entries[i]) byId.set(entries[i].id, i);
  }
  function posOfId(id) { var p = byId.get(id); return p === undefined ? -1 : p; }

  // Pi's getBranch from a position: root → entry (a loop is cut where it repeats).
  function pathTo(pos) {
    var out = [], seen = new Set();
    while (pos >= 0 && !seen.has(pos)) { seen.add(pos); out.push(pos); pos = META.parent[pos]; }
    return out.reverse();
  }
  function isSystemMessage(e) { var m = msgOf(e); return !!m && m.role === "system"; }
  // Pi's buildContextEntries: the latest compaction, the entries from its firstKeptEntryId
  // (system messages left out), then everything after it. Ids compare with ===, as in Pi.
  function contextAt(path) {
    var ci = -1;
    for (var i = path.length - 1; i >= 0; i--) {
      var e = ENTRIES[path[i]];
      if (isObj(e) && e.type === "compaction") { ci = i; break; }
    }
    if (ci < 0) return { order: path.slice(), compIdx: -1, start: 0 };
    var comp = ENTRIES[path[ci]];
    for (var j = 0; j < ci; j++) { if (isObj(ENTRIES[path[j]]) && ENTRIES[path[j]].id === comp.id) { ci = j; break; } }
    var start = ci;
    for (var k = 0; k < ci; k++) {
      var ek = ENTRIES[path[k]];
      if ((isObj(ek) ? ek.id : undefined) === comp.firstKeptEntryId) { start = k; break; }
    }
    var order = [path[ci]];
    for (var a = start; a < ci; a++) if (!isSystemMessage(ENTRIES[path[a]])) order.push(path[a]);
    for (var b = ci + 1; b < path.length; b++) order.push(path[b]);
    return { order: order, compIdx: ci, start: start };
  }
  // In-page estimate for entries without an exact replay (Pi's estimateContextTokens, simplified:
  // the latest trusted usage plus the estimates after it, or the sum of all estimates).
  function estimateAt(path, ctx) {
    var idxInPath = new Map();
    path.forEach(function (p, i) { idxInPath.set(p, i); });
    var lastInvalid = -1;
    for (var i = path.length - 1; i >= 0; i--) {
      var e = ENTRIES[path[i]];
      if (isObj(e) && (e.type === "compaction" || e.type === "context_edit")) { lastInvalid = i; break; }
    }
    var tk = function (p, at) { return at > 0 && ENTRIES[p].type === "compaction" ? 0 : (META.tokens[p] || 0); };
    for (var k = ctx.order.length - 1; k >= 0; k--) {
      var p = ctx.order[k];
      if (META.usageTokens[p] != null) {
        if (idxInPath.get(p) > lastInvalid) {
          var t = META.usageTokens[p];
          for (var r = k + 1; r < ctx.order.length; r++) t += tk(ctx.order[r], r);
          return t;
        }
        break;
      }
    }
    var sum = 0;
    ctx.order.forEach(function (p2, at) { sum += tk(p2, at); });
    return sum;
  }

  // -- tree ---------------------------------------------------------------------------------
  function kindOf(e) {
    if (!isObj(e)) return ["other", "?"];
    var m = msgOf(e);
    if (m) return [String(m.role), String(m.role)];
    return [String(e.type), String(e.type).replace(/_/g, " ")];
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
  function hasText(content) {
    if (typeof content === "string") return content.trim().length > 0;
    return Array.isArray(content) && content.some(function (c) { return isObj(c) && c.type === "text" && typeof c.text === "string" && c.text.trim().length > 0; });
  }
  var SETTINGS_TYPES = ["label", "custom", "context_edit", "model_change", "thinking_level_change"];
  // Pi's tree filters (export-html): default, no-tools, user-only, labeled-only, all; plus search.
  function passes(pos) {
    var e = ENTRIES[pos];
    if (pos === selected) return true;
    var m = msgOf(e);
    if (filterMode !== "all" && m && m.role === "assistant") {
      var errorOrAborted = m.stopReason && m.stopReason !== "stop" && m.stopReason !== "toolUse";
      if (!hasText(m.content) && !errorOrAborted) return false;
    }
    var settings = isObj(e) && SETTINGS_TYPES.indexOf(e.type) >= 0;
    var ok = true;
    if (filterMode === "user-only") ok = !!m && m.role === "user";
    else if (filterMode === "no-tools") ok = !settings && !(m && m.role === "toolResult");
    else if (filterMode === "labeled-only") ok = META.labels[pos] !== undefined;
    else if (filterMode === "default") ok = !settings;
    if (!ok) return false;
    if (query) {
      if (!searchText) searchText = new Array(ENTRIES.length);
      var t = searchText[pos];
      if (t === undefined) {
        var lab = META.labels[pos] || "";
        t = searchText[pos] = (lab + " " + kindOf(e)[1] + " " + preview(e) + " " + idText(e)).toLowerCase();
      }
      var tokens = query.split(/\s+/).filter(Boolean);
      for (var i = 0; i < tokens.length; i++) if (t.indexOf(tokens[i]) < 0) return false;
    }
    return true;
  }
  function buildTree() {
    var tree = document.getElementById("tree");
    var html = [];
    var order = META.order;
    for (var i = 0; i < order.length; i++) {
      var p = order[i], e = ENTRIES[p], k = kindOf(e);
      var lab = META.labels[p] !== undefined ? '<span class="label">' + esc(META.labels[p]) + "</span>" : "";
      html.push('<div class="row" role="treeitem" data-tree-id="' + esc(idText(e)) + '" data-pos="' + p +
        '" style="--d:' + META.indent[p] + '"><span class="kind ' + esc(k[0]) + '">' + esc(k[1]) + "</span>" + lab +
        esc(oneLine(preview(e), 140)) + "</div>");
    }
    tree.innerHTML = html.join("");
    marked = [];
    rows = new Array(ENTRIES.length);
    orderIndex = new Array(ENTRIES.length);
    var els = tree.children;
    for (var j = 0; j < els.length; j++) { rows[order[j]] = els[j]; orderIndex[order[j]] = j; }
  }
  var visibleCount = 0;
  function applyFilter() {
    var order = META.order, n = 0;
    for (var i = 0; i < order.length; i++) {
      var p = order[i], show = passes(p), el = rows[p];
      if (el.hidden === show) el.hidden = !show;
      if (show) n++;
    }
    visibleCount = n;
    showCount();
  }
  function showCount() {
    document.getElementById("tree-status").textContent = fmt(visibleCount) + " / " + fmt(ENTRIES.length) + " entries";
  }
  // Only the selected row is shown whatever the filter: a new selection re-checks two rows.
  function refilterRow(p) {
    if (p < 0 || !rows[p]) return;
    var show = passes(p);
    if (rows[p].hidden === show) { rows[p].hidden = !show; visibleCount += show ? 1 : -1; showCount(); }
  }

  // -- transcript ---------------------------------------------------------------------------
  var KEYWORDS = /^(?:function|return|const|let|var|if|else|for|while|do|switch|case|break|continue|class|def|import|from|export|as|new|try|catch|finally|throw|raise|async|await|yield|with|in|of|is|not|and|or|None|True|False|null|true|false|undefined|this|self|public|private|static|fn|pub|impl|struct|enum|type|interface|package|func|go|defer|lambda|elif|except|pass)$/;
  function highlight(code, path) {
    var hash = /\.(py|sh|bash|zsh|rb|pl|toml|ya?ml|r)$/i.test(path || "") || /^(Makefile|Dockerfile)$/.test(String(path || "").split("/").pop());
    var re = hash
      ? /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g
      : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;
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
    if (typeof content === "string") return '<div class="text">' + esc(content) + "</div>";
    if (!Array.isArray(content)) return content === undefined ? "" : pre(JSON.stringify(content, null, 2));
    return content.map(function (c) {
      if (!isObj(c)) return pre(JSON.stringify(c));
      if (c.type === "text") return '<div class="text">' + esc(String(c.text)) + "</div>";
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
  function callFor(id) {
    if (!callArgs) {
      callArgs = new Map();
      for (var i = 0; i < ENTRIES.length; i++) {
        var m = msgOf(ENTRIES[i]);
        if (m && m.role === "assistant" && Array.isArray(m.content))
          m.content.forEach(function (c) { if (isObj(c) && c.type === "toolCall") callArgs.set(c.id, c); });
      }
    }
    return callArgs.get(id);
  }
  function toolResult(m) {
    var call = callFor(m.toolCallId), a = call && isObj(call.arguments) ? call.arguments : {};
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
  function entryBody(e) {
    if (!isObj(e)) return pre(JSON.stringify(e));
    var m = msgOf(e);
    if (m) {
      if (m.role === "toolResult") return toolResult(m);
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
          '<div class="text">' + esc(String(e.summary || "")) + "</div>";
      case "branch_summary":
        return '<div class="muted">' + esc("Summary of the branch left at " + String(e.fromId)) + "</div>" + '<div class="text">' + esc(String(e.summary || "")) + "</div>";
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
    var e = ENTRIES[p], m = msgOf(e), k = kindOf(e), bits = [];
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
    var when = isObj(e) && typeof e.timestamp === "string" ? "<time>" + esc(e.timestamp) + "</time>" : "";
    var badge = region ? '<span class="badge region-' + esc(region) + '">' + esc(region) + "</span>" : "";
    return '<header><span class="title">' + esc(title) + "</span><code>" + esc(idText(e)) + "</code>" + when + lab + badge +
      (bits.length ? '<span>' + esc(bits.join(" ")) + "</span>" : "") + '<span class="tok">' + esc(right.join(" · ")) + "</span></header>";
  }
  function fillBody(article) {
    if (article.dataset.filled) return;
    article.dataset.filled = "1";
    var p = +article.dataset.pos, div = document.createElement("div");
    try { div.innerHTML = entryBody(ENTRIES[p]); } catch (err) { div.innerHTML = pre("(this entry cannot be shown: " + String(err && err.message) + ")", "error"); }
    article.appendChild(div);
  }
  function regionsFor(path, replay) {
    var out = new Array(path.length);
    if (!replay || !replay.plan) return out;
    var i = 0;
    replay.plan.regions.forEach(function (run) { for (var k = 0; k < run[1] && i < path.length; k++) out[i++] = run[0]; });
    return out;
  }
  // The transcript draws the last CHUNK entries of the path; earlier ones come in chunks when
  // scrolled to (or asked for), and entry bodies are drawn as they near the viewport.
  var CHUNK = 1500, tState = null, marked = [];
  function articleHtml(i) {
    var t = tState, p = t.path[i], e = ENTRIES[p], k = kindOf(e), inc = t.inCtx.has(p);
    var cls = k[0] + (EVENTS.indexOf(isObj(e) && e.type) >= 0 ? " event" : "") + (inc ? "" : " out") + (p === t.pos ? " selected" : "");
    var status = inc ? ' data-in-context="true"' : ' data-context="' + (t.ctx.compIdx >= 0 && i < t.ctx.compIdx ? "summarized" : "omitted") + '"';
    var region = t.replay && t.replay.plan && t.replay.plan.wouldCompact ? t.regions[i] : (inc ? "" : "summarized away");
    return '<article class="' + esc(cls) + '" data-entry-id="' + esc(idText(e)) + '" data-pos="' + p + '"' + status + ">" + entryHead(p, region) + "</article>";
  }
  function watchBodies(list) {
    if (!observer) {
      for (var j = 0; j < list.length; j++) fillBody(list[j]);
      return;
    }
    for (var a = 0; a < list.length; a++) observer.observe(list[a]);
  }
  function earlierButton() {
    var n = tState.first;
    return n > 0 ? '<button id="earlier" type="button">Show ' + fmt(Math.min(n, CHUNK)) + " earlier entries (" + fmt(n) + " before these)</button>" : "";
  }
  function showEarlier() {
    var t = tState, btn = document.getElementById("earlier"), main = document.getElementById("main");
    if (!t || !btn || t.first <= 0) return;
    var from = Math.max(0, t.first - CHUNK), html = [];
    for (var i = from; i < t.first; i++) html.push(articleHtml(i));
    var before = main.scrollHeight, top = main.scrollTop;
    var holder = document.createElement("div");
    holder.innerHTML = html.join("");
    var added = Array.prototype.slice.call(holder.children);
    var frag = document.createDocumentFragment();
    added.forEach(function (el) { frag.appendChild(el); });
    btn.parentNode.insertBefore(frag, btn.nextSibling);
    t.first = from;
    if (from > 0) btn.textContent = "Show " + fmt(Math.min(from, CHUNK)) + " earlier entries (" + fmt(from) + " before these)";
    else btn.parentNode.removeChild(btn);
    watchBodies(added);
    main.scrollTop = top + (main.scrollHeight - before);
  }
  function renderTranscript(pos) {
    var path = pathTo(pos), ctx = contextAt(path), inCtx = new Set(ctx.order);
    var replay = META.replays[String(pos)];
    tState = { path: path, ctx: ctx, inCtx: inCtx, replay: replay, regions: regionsFor(path, replay), pos: pos, first: Math.max(0, path.length - CHUNK) };
    ctxState = tState;
    var html = [earlierButton()];
    for (var i = tState.first; i < path.length; i++) html.push(articleHtml(i));
    var tr = document.getElementById("transcript");
    if (observer) { observer.disconnect(); observer = null; }
    tr.innerHTML = html.join("");
    var arts = Array.prototype.slice.call(tr.querySelectorAll("article"));
    if (arts.length > 200 && "IntersectionObserver" in window) {
      observer = new IntersectionObserver(function (items) {
        items.forEach(function (it) {
          if (!it.isIntersecting) return;
          if (it.target.id === "earlier") showEarlier();
          else { fillBody(it.target); observer.unobserve(it.target); }
        });
      }, { root: document.getElementById("main"), rootMargin: "1500px 0px" });
    }
    watchBodies(arts);
    var btn = document.getElementById("earlier");
    if (btn) {
      btn.addEventListener("click", showEarlier);
      if (observer) observer.observe(btn);
    }
    renderSummary(pos, path, ctx, replay);
    for (var r = 0; r < marked.length; r++) rows[marked[r]].className = "row";
    marked = path.slice();
    path.forEach(function (p2) { rows[p2].className = inCtx.has(p2) ? "row on-path in-ctx" : "row on-path"; });
    rows[pos].classList.add("selected");
    var last = arts[arts.length - 1];
    if (last && last.scrollIntoView) last.scrollIntoView({ block: "end" });
  }
  function renderSummary(pos, path, ctx, replay) {
    var cost = 0, tokens = 0, calls = 0, assistants = 0;
    path.forEach(function (p) {
      var m = msgOf(ENTRIES[p]);
      if (m && m.role === "assistant") {
        assistants++; cost += costOf(m); tokens += usageTotal(m.usage);
        if (Array.isArray(m.content)) calls += m.content.filter(function (c) { return isObj(c) && c.type === "toolCall"; }).length;
      }
    });
    var window_ = replay ? replay.contextWindow : (META.replays[String(META.defaultLeaf)] || {}).contextWindow;
    var exact = replay && typeof replay.tokens === "number";
    var total = exact ? replay.tokens : estimateAt(path, ctx);
    var pct = window_ ? total / window_ * 100 : null;
    var parts = ['<div><b>Context at ' + esc(idText(ENTRIES[pos])) + "</b>: " + fmt(ctx.order.length) + " of " + fmt(path.length) +
      " entries on the path" + (ctx.compIdx >= 0 ? " (" + fmt(path.length - ctx.order.length) + " summarized away by the compaction at " + esc(idText(ENTRIES[path[ctx.compIdx]])) + ")" : "") + "</div>"];
    parts.push('<div id="ctx-total" data-tokens="' + total + '" data-exact="' + (exact ? "true" : "false") + '">' + (exact ? "" : "≈ ") + fmt(total) + " tokens" +
      (window_ ? " of a " + fmt(window_) + "-token window (" + pct.toFixed(1) + "%)" : "") +
      (exact ? "" : ' <span class="muted">(estimated in the page; exact figures are computed at the leaves)</span>') + "</div>");
    if (window_) parts.push('<div class="bar' + (pct > 100 ? " over" : "") + '"><div style="width:' + Math.min(100, pct).toFixed(1) + '%"></div></div>');
    if (replay && replay.plan) {
      var pl = replay.plan, t = pl.totals || {};
      parts.push('<div id="ctx-plan" data-first-kept="' + esc(pl.firstKeptEntryId === null ? "" : pl.firstKeptEntryId) + '" data-would-compact="' + pl.wouldCompact + '">' + (pl.wouldCompact ? "<b>Pi would compact here</b> (over the " + fmt(pl.threshold) + "-token threshold): " :
        "Compaction plan here (not due: threshold " + fmt(pl.threshold) + " tokens): ") +
        (pl.reason ? esc(pl.reason) : esc("summarize " + fmt(t.summarize || 0) + " tokens" + (pl.isSplitTurn ? ", turn prefix " + fmt(t["turn-prefix"] || 0) : "") +
          ", keep " + fmt(t.kept || 0) + " from " + String(pl.firstKeptEntryId))) + "</div>");
    }
    parts.push('<div class="muted">This branch: ' + fmt(assistants) + (assistants === 1 ? " reply, " : " replies, ") + fmt(calls) + (calls === 1 ? " tool call, " : " tool calls, ") + fmt(tokens) + " tokens" +
      (cost ? ", " + money(cost) : "") + "</div>");
    document.getElementById("summary").innerHTML = parts.join("");
  }

  // -- selection, keys, page ----------------------------------------------------------------
  function select(pos, fromUser) {
    if (pos < 0 || pos >= ENTRIES.length) return;
    if (fromUser) followDefault = false;
    var before = selected;
    selected = pos;
    renderTranscript(pos);
    refilterRow(before);
    refilterRow(pos);
    var id = idText(ENTRIES[pos]);
    if (fromUser && history.replaceState) history.replaceState(null, "", "#leaf=" + encodeURIComponent(id));
  }
  function fromHash() {
    var m = /(?:^#|&)leaf=([^&]*)/.exec(location.hash);
    if (!m) return -1;
    var id;
    try { id = decodeURIComponent(m[1]); } catch (err) { return -1; }
    return posOfId(id);
  }
  // The next visible row up or down the tree (delta ±1), or the first/last (±Infinity).
  function move(delta) {
    var order = META.order, n = order.length;
    if (!n) return;
    var step = delta > 0 ? 1 : -1, i, target = -1;
    if (!isFinite(delta)) { i = delta > 0 ? n - 1 : 0; step = delta > 0 ? -1 : 1; }
    else i = selected >= 0 ? orderIndex[selected] + step : 0;
    for (; i >= 0 && i < n; i += step) if (!rows[order[i]].hidden) { target = order[i]; break; }
    if (target < 0 || target === selected) return;
    select(target, true);
    if (rows[selected].scrollIntoView) rows[selected].scrollIntoView({ block: "nearest" });
  }
  var nudged = -1;
  function nudge(step) {
    var order = META.order, from = nudged >= 0 ? nudged : selected;
    for (var i = orderIndex[from] + step; i >= 0 && i < order.length; i += step) if (!rows[order[i]].hidden) { nudged = order[i]; return; }
  }
  function commitNudge() { if (nudged >= 0) { var p = nudged; nudged = -1; select(p, true); if (rows[p].scrollIntoView) rows[p].scrollIntoView({ block: "nearest" }); } }
  function setTheme(t) {
    document.documentElement.setAttribute("data-theme", t);
    try { localStorage.setItem("pitools-theme", t); } catch (err) { /* file pages may have no storage */ }
  }
  function skeleton() {
    var h = META.header || {}, filters = [["default", "Default"], ["no-tools", "No tools"], ["user-only", "User"], ["labeled-only", "Labeled"], ["all", "All"]];
    app.innerHTML = '<div id="top"><h1>' + esc("Session " + String(h.id)) + '</h1><span class="facts">' +
      esc([String(h.cwd || ""), String(h.timestamp || ""), META.file].join(" · ")) + '</span><span class="spacer"></span>' +
      '<span class="muted"><kbd>↑</kbd><kbd>↓</kbd> move · <kbd>/</kbd> search · <kbd>t</kbd> theme</span> ' +
      '<button id="theme" type="button">Theme</button></div>' +
      '<nav id="side"><div class="controls">' + filters.map(function (f) {
        return '<button type="button" class="filter' + (f[0] === filterMode ? " active" : "") + '" data-filter="' + f[0] + '">' + f[1] + "</button>";
      }).join("") + '<input type="search" id="search" placeholder="Search the tree" aria-label="Search the tree"></div>' +
      '<div id="tree-status"></div><div id="tree" role="tree" tabindex="0"></div></nav>' +
      '<main id="main"><div id="summary"></div><div id="transcript"></div></main>';
    document.getElementById("tree").addEventListener("click", function (ev) {
      var row = ev.target.closest && ev.target.closest(".row");
      if (row) select(+row.dataset.pos, true);
    });
    Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (b) {
      b.addEventListener("click", function () {
        filterMode = b.dataset.filter;
        Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (x) { x.classList.toggle("active", x === b); });
        applyFilter();
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
    else if (ev.key === "PageDown") { for (var s = 0; s < 20; s++) nudge(1); commitNudge(); ev.preventDefault(); }
    else if (ev.key === "PageUp") { for (var s2 = 0; s2 < 20; s2++) nudge(-1); commitNudge(); ev.preventDefault(); }
    else if (ev.key === "/") { document.getElementById("search").focus(); ev.preventDefault(); }
    else if (ev.key === "t") { document.getElementById("theme").click(); }
  });
  window.addEventListener("hashchange", function () { var p = fromHash(); if (p >= 0 && p !== selected) { followDefault = false; select(p, false); } });

  function start(meta, entries) {
    load(meta, entries);
    buildTree();
    var p = fromHash();
    if (p >= 0) followDefault = false;
    select(p >= 0 ? p : META.initialLeaf, false);
    document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
    document.documentElement.setAttribute("data-ready", "true");
  }
  var theme = null;
  try { theme = localStorage.getItem("pitools-theme"); } catch (err) { theme = null; }
  setTheme(theme || (window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  var meta = JSON.parse(document.getElementById("pt-meta").textContent);
  META = meta;
  skeleton();
  start(meta, JSON.parse(document.getElementById("pt-entries").textContent));

  // -- live updates (pitools serve) ---------------------------------------------------------
  if (meta.live && window.fetch) {
    var stamp = meta.live.stamp;
    var poll = function () {
      fetch(meta.live.stampUrl, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s || s.stamp === stamp) return null;
          stamp = s.stamp;
          return fetch(meta.live.dataUrl, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.ok ? r.json() : null; });
        })
        .then(function (d) {
          if (!d) return;
          var keep = followDefault ? -1 : selected, keepId = keep >= 0 ? ENTRIES[keep] && ENTRIES[keep].id : undefined;
          load(d.meta, d.entries);
          buildTree();
          var p = keep >= 0 ? posOfId(keepId) : -1;
          select(p >= 0 ? p : META.initialLeaf, false);
          document.documentElement.setAttribute("data-updated", String(stamp));
        })
        .catch(function () { /* the server went away: try again later */ })
        .then(function () { setTimeout(poll, 1000); });
    };
    setTimeout(poll, 1000);
  }
})();
