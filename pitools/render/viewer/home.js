// pitools serve: session list, search and usage charts from the JSON endpoints. All text is
// escaped by esc() before it becomes markup; nothing here writes anything anywhere.
"use strict";
(function () {
  var root = document.getElementById("home");
  var USAGE_SINCE = "30d";
  function esc(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }
  function fmt(n) { return typeof n === "number" && isFinite(n) ? n.toLocaleString("en-US") : ""; }
  function money(n) { return typeof n === "number" && isFinite(n) ? "$" + n.toFixed(2) : ""; }
  function tokensOf(x) { if (!x) return 0; if (typeof x.totalTokens === "number") return x.totalTokens; return x.tokens && typeof x.tokens === "object" ? x.tokens.total : 0; }
  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
      if (!r.ok) return r.text().then(function (t) { throw new Error(t || r.statusText); });
      return r.json();
    });
  }
  // A session is opened by its id and its file's path (two files may hold the same id).
  // Addresses are relative: the app lives under the server's random root path.
  function sessionLink(s, label, leaf) {
    var path = typeof s.path === "string" ? "?path=" + encodeURIComponent(s.path) : "";
    return '<a href="session/' + encodeURIComponent(s.id) + path + (leaf ? "#leaf=" + encodeURIComponent(leaf) : "") + '">' + esc(label) + "</a>";
  }
  var theme = null;
  try { theme = localStorage.getItem("pitools-theme"); } catch (e) { theme = null; }
  document.documentElement.setAttribute("data-theme", theme || (window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  root.innerHTML = '<h1>pi sessions</h1>' +
    '<h2>Search</h2><form id="search"><input name="q" type="search" placeholder="words, &quot;a phrase&quot;, prefix*" aria-label="Search">' +
    '<select name="role" aria-label="Role"><option value="">any role</option><option>user</option><option>assistant</option><option>toolResult</option><option>bashExecution</option></select>' +
    '<input name="project" placeholder="project" size="10" aria-label="Project"><input name="since" placeholder="since, e.g. 7d" size="11" aria-label="Since">' +
    '<input name="until" placeholder="until" size="9" aria-label="Until">' +
    '<label><input type="checkbox" name="in_context" value="1"> in context</label>' +
    '<label><input type="checkbox" name="thinking" value="1"> thinking</label>' +
    '<select name="branch" aria-label="Branch"><option value="all">all branches</option><option value="current">current branch</option></select>' +
    '<button type="submit">Search</button></form><div id="hits"></div>' +
    '<h2>Usage</h2><form id="usage"><select name="by" aria-label="By"><option>day</option><option>week</option><option>month</option><option>model</option><option>provider</option><option>project</option><option>session</option></select>' +
    '<input name="since" value="' + USAGE_SINCE + '" placeholder="since: all time" size="11" aria-label="Usage since" title="the last 30 days unless changed; empty: all time"><button type="submit">Show</button></form><div id="chart" class="chart"></div>' +
    '<h2>Sessions</h2><div id="sessions">Loading…</div>';

  function showSessions() {
    getJSON("api/ls").then(function (d) {
      var rows = (d.sessions || []).map(function (s) {
        var label = s.name || s.firstMessage || s.id;
        return "<tr data-session-id=\"" + esc(s.id) + "\"><td>" + sessionLink(s, String(label).slice(0, 120)) + '<div class="muted">' + esc(s.cwd || "") + "</div>" +
          (s.path ? '<div class="resume muted">resume: <code class="cmd">' + esc(resumeCommand(String(s.path))) + "</code></div>" : "") + "</td>" +
          "<td>" + esc(String(s.modified || "").slice(0, 16).replace("T", " ")) + '</td><td class="num">' + fmt(s.messageCount) + '</td><td class="num">' +
          fmt(tokensOf(s)) + '</td><td class="num">' + money(s.cost) + "</td></tr>";
      });
      document.getElementById("sessions").innerHTML = rows.length ? '<table class="list"><thead><tr><th>Session</th><th>Last activity</th><th class="num">Messages</th><th class="num">Tokens</th><th class="num">Cost</th></tr></thead><tbody>' + rows.join("") + "</tbody></table>" : "No sessions found.";
      document.documentElement.setAttribute("data-ready", "true");
    }).catch(function (e) { document.getElementById("sessions").innerHTML = '<p class="error">' + esc(e.message) + "</p>"; });
  }
  // `pi --session PATH`, as core/views/resume.py writes it: the path quoted as shlex.quote does
  // (a hostile file name stays one word), a bare name given ./ so Pi reads it as a path.
  function shellQuote(text) {
    if (!text) return "''";
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(text) ? text : "'" + text.replace(/'/g, "'\"'\"'") + "'";
  }
  function resumeCommand(path) {
    return "pi --session " + shellQuote(path.indexOf("/") < 0 && path.indexOf("\\") < 0 ? "./" + path : path);
  }
  function params(form) {
    var p = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || (el.type === "checkbox" && !el.checked) || el.value === "") return;
      p.append(el.name, el.value);
    });
    return p.toString();
  }
  function highlight(snippet, spans) {
    var out = "", at = 0;
    (spans || []).forEach(function (h) { out += esc(snippet.slice(at, h[0])) + "<mark>" + esc(snippet.slice(h[0], h[1])) + "</mark>"; at = h[1]; });
    return out + esc(snippet.slice(at));
  }
  document.getElementById("search").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var box = document.getElementById("hits");
    box.textContent = "Searching…";
    getJSON("api/search?" + params(ev.target)).then(function (d) {
      box.innerHTML = '<p class="muted">' + fmt(d.count) + " hit(s)" + (d.truncated ? " (more not shown)" : "") + "</p>" + (d.hits || []).map(function (h) {
        var s = h.session || {};
        return '<div class="hit">' + sessionLink(s, s.name || s.id, h.entryId) + ' <span class="muted">' + esc(h.role || "") + " · " + esc(String(h.timestamp || "").slice(0, 16)) +
          (h.inContext ? " · in context" : h.summarizedAway ? " · summarized away" : "") + '</span><div class="text">' + highlight(String(h.snippet || ""), h.highlights) + "</div>" +
          (Array.isArray(h.commands) && h.commands[1] ? '<div class="resume muted">resume: <code class="cmd">' + esc(h.commands[1]) + "</code></div>" : "") + "</div>";
      }).join("");
    }).catch(function (e) { box.innerHTML = '<p class="error">' + esc(e.message) + "</p>"; });
  });
  // Usage opens on the last 30 days (what ccusage users expect); the field shows it and can be cleared.
  function sinceText(query) {
    var since = new URLSearchParams(query).get("since");
    return since ? " since " + since : " (all time)";
  }
  function showUsage(query) {
    var box = document.getElementById("chart");
    getJSON("api/usage?" + query).then(function (d) {
      var rows = d.rows || [], max = 0;
      rows.forEach(function (r) { if (r.cost > max) max = r.cost; });
      var useTokens = max === 0;
      if (useTokens) rows.forEach(function (r) { if (tokensOf(r) > max) max = tokensOf(r); });
      box.innerHTML = rows.map(function (r) {
        var v = useTokens ? tokensOf(r) : r.cost, w = max ? (v / max * 100) : 0;
        var label = r.session ? (r.session.name || r.session.id) : r.key;
        return '<div class="barrow"><span class="lbl" title="' + esc(label) + '">' + esc(label) + '</span><div><div class="b" style="width:' + w.toFixed(2) + '%"></div></div><span class="v">' +
          esc(money(r.cost) + " · " + fmt(tokensOf(r)) + " tok" + (r.copied && r.copied.records ? " · copied " + money(r.copied.cost) : "")) + "</span></div>";
      }).join("") + '<p class="muted">Total' + esc(sinceText(query)) + ': ' + esc(money((d.totals || {}).cost) + " · " + fmt(tokensOf(d.totals)) + " tokens") + "</p>";
    }).catch(function (e) { box.innerHTML = '<p class="error">' + esc(e.message) + "</p>"; });
  }
  document.getElementById("usage").addEventListener("submit", function (ev) { ev.preventDefault(); showUsage(params(ev.target)); });
  showSessions();
  showUsage("by=day&since=" + USAGE_SINCE);
})();
