  // -- transcript ---------------------------------------------------------------------------
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
    var path = pathTo(pos), ctx = contextAt(path), inCtx = new Set(ctx.order);
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
  // The command that takes the selected entry back into Pi (core/views/resume.py): the file at its
  // default leaf, else the branch ending at the entry cloned first. Quoted as shlex.quote does.
  function shellQuote(text) {
    if (!text) return "''";
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(text) ? text : "'" + text.replace(/'/g, "'\"'\"'") + "'";
  }
  function resumeCommand(pos) {
    var r = META.resume;
    if (!isObj(r)) return "";
    return pos === META.defaultLeaf ? String(r.leaf) : String(r.cloneBefore) + shellQuote(idText(pos)) + String(r.cloneAfter);
  }
  function resumeHtml(pos) {
    var cmd = resumeCommand(pos);
    if (!cmd) return "";
    return '<div id="resume">' + (pos === META.defaultLeaf ? "Resume in Pi: " : "Resume this entry in Pi: ") +
      '<code class="cmd">' + esc(cmd) + '</code> <button type="button" id="copy-resume" title="copy the command">Copy</button></div>';
  }
  function copyText(text, button) {
    var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done, function () { selectCmd(button); }); }
    else selectCmd(button);
  }
  // Where the clipboard is not offered (a file page): select the command for the reader to copy.
  function selectCmd(button) {
    var code = button.parentNode.querySelector("code.cmd"), range = document.createRange();
    range.selectNodeContents(code);
    var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
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
    parts.push(resumeHtml(pos));
    parts.push(checkHtml());
    parts.push('<div class="muted">This branch: ' + fmt(assistants) + (assistants === 1 ? " reply, " : " replies, ") + fmt(calls) + (calls === 1 ? " tool call, " : " tool calls, ") + fmt(tokens) + " tokens" +
      (cost ? ", " + money(cost) : "") + "</div>");
    document.getElementById("summary").innerHTML = parts.join("");
    var copy = document.getElementById("copy-resume");
    if (copy) copy.addEventListener("click", function () { copyText(resumeCommand(pos), copy); });
  }
