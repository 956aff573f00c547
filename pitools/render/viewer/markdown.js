  // -- text to safe HTML: Markdown, code highlighting, ANSI colours, diffs ---------------
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
