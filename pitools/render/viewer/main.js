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
      // What pitools wrote after the entries (the request check): part of the read model.
      var late = document.getElementById("pt-late");
      if (late) {
        var more = JSON.parse(late.textContent);
        for (var key in more) if (Object.prototype.hasOwnProperty.call(more, key)) META[key] = more[key];
      }
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
