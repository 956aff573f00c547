  // Small pure helpers: escaping, numbers, times, message text (no page state, no DOM).
  function esc(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
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
