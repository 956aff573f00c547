// The viewer's text renderers (render/viewer/markdown.js, with util.js's esc) under node, no
// browser: each Markdown rule, and that hostile text stays text. Run by
// tests/viewer/test_viewer_markdown_node.py (`node --test`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const dir = new URL("../../pitools/render/viewer/", import.meta.url);
const source = ["util.js", "markdown.js"].map((f) => readFileSync(new URL(f, dir), "utf8")).join("");
const sandbox = vm.createContext({});
vm.runInContext(`"use strict";\n${source}\n;globalThis.api = { markdown, esc, highlight, ansi, diff };`, sandbox);
const { markdown, esc, highlight, ansi, diff } = sandbox.api;
const md = (text) => markdown(text);
const wrap = (inner) => `<div class="md">${inner}</div>`;

test("paragraphs: blank lines part them, single newlines stay inside", () => {
  assert.equal(md("a\nb\n\nc"), wrap("<p>a\nb</p><p>c</p>"));
  assert.equal(md(""), wrap(""));
});

test("headings sit two levels down (h3..h6) and lose a closing run of #", () => {
  assert.equal(md("# Title ##"), wrap("<h3>Title</h3>"));
  assert.equal(md("#### four"), wrap("<h6>four</h6>"));
  assert.equal(md("###### six"), wrap("<h6>six</h6>"));
  assert.equal(md("#nospace"), wrap("<p>#nospace</p>"));
});

test("lists: bullets, numbers, continuation lines", () => {
  assert.equal(md("- a\n* b\n+ c"), wrap("<ul><li>a</li><li>b</li><li>c</li></ul>"));
  assert.equal(md("1. one\n2) two"), wrap("<ol><li>one</li><li>two</li></ol>"));
  assert.equal(md("- a\n  more\nafter"), wrap("<ul><li>a more</li></ul><p>after</p>"));
  assert.equal(md("- a\n1. b"), wrap("<ul><li>a</li></ul><ol><li>b</li></ol>"));
});

test("quotes nest, up to a depth, then are text", () => {
  assert.equal(md("> q\n> r"), wrap('<blockquote><div class="md"><p>q\nr</p></div></blockquote>'));
  assert.equal(md(">> deep"), wrap('<blockquote><div class="md"><blockquote><div class="md"><p>deep</p></div></blockquote></div></blockquote>'));
  const deep = md(">".repeat(40) + " x");
  assert.equal((deep.match(/<blockquote>/g) || []).length, 17);
  assert.ok(deep.includes('<div class="text">&gt;&gt;&gt;'));
});

test("code fences: highlighted by the language named, closed by the same fence or the end", () => {
  assert.equal(md("```js\nvar x = 1; // hi\n```"),
    wrap('<pre><span class="k">var</span> x = <span class="n">1</span>; <span class="c">// hi</span></pre>'));
  assert.equal(md("```py\n# c\n'</pre>'"), wrap('<pre><span class="c"># c</span>\n<span class="s">&#x27;&lt;/pre&gt;&#x27;</span></pre>'));
  assert.equal(md("~~~\n**bold** <b>\n~~~\nafter"), wrap("<pre>**bold** &lt;b&gt;</pre><p>after</p>"));
});

test("inline code, emphasis and strong", () => {
  assert.equal(md("`a<b` and ``x`y``"), wrap("<p><code>a&lt;b</code> and <code>x`y</code></p>"));
  assert.equal(md("*em* _em_ **st** __st__"), wrap("<p><em>em</em> <em>em</em> <strong>st</strong> <strong>st</strong></p>"));
  assert.equal(md("**a *b* c**"), wrap("<p><strong>a <em>b</em> c</strong></p>"));
  assert.equal(md("snake_case_name and 2 * 3 * 4"), wrap("<p>snake_case_name and 2 * 3 * 4</p>"));
  assert.equal(md("`never closed"), wrap("<p>`never closed</p>"));
  assert.equal(md("*never closed"), wrap("<p>*never closed</p>"));
});

test("links: an <a> only to http(s), anything else its text and address", () => {
  assert.equal(md("[site](https://e.com/a?b=1&c=2)"),
    wrap('<p><a href="https://e.com/a?b=1&amp;c=2" rel="noopener noreferrer" target="_blank">site</a></p>'));
  assert.equal(md("[**b**](http://x)"), wrap('<p><a href="http://x" rel="noopener noreferrer" target="_blank"><strong>b</strong></a></p>'));
  assert.equal(md("[x](javascript:alert(1))"), wrap("<p>x (javascript:alert(1))</p>"));
  assert.equal(md("[x](data:text/html,hi)"), wrap("<p>x (data:text/html,hi)</p>"));
});

test("images are never fetched: their alt text and address are shown", () => {
  assert.equal(md("![cat](https://e.com/c.png)"), wrap('<p><span class="md-img">[image: cat https://e.com/c.png]</span></p>'));
  assert.ok(!md("![x](https://e.com/x.png)").includes("<img"));
});

test("hostile text stays text", () => {
  assert.equal(md("<script>alert(1)</script>"), wrap("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"));
  assert.equal(md(`<img src=x onerror="alert('1')">`), wrap("<p>&lt;img src=x onerror=&quot;alert(&#x27;1&#x27;)&quot;&gt;</p>"));
  // A quote in an address cannot leave the href attribute.
  const out = md('[x](https://a"onmouseover=alert(1))');
  assert.ok(out.includes('href="https://a&quot;onmouseover=alert(1"'), out);
  assert.equal(esc(`&<>"'`), "&amp;&lt;&gt;&quot;&#x27;");
});

// Every tag the renderer may make, with only these attributes, values quoted and escaped.
const TAG = /<(\/?)([a-z0-9]+)((?: (?:class|href|rel|target)="[^"<>]*")*)>/g;
const ALLOWED = new Set(["div", "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em", "strong", "a", "span"]);

test("random hostile input makes only the renderer's own markup", () => {
  let seed = 7;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const pieces = ["<", ">", "&", '"', "'", "*", "_", "`", "```", "[", "](", ")", "![", "#", "> ", "- ", "1. ", "\n", "\n\n",
    "https://e.com", "javascript:", " ", "a", "<script>", "</pre>", "\u202e", "&amp;"];
  for (let round = 0; round < 2000; round++) {
    let text = "";
    for (let k = rand(40); k >= 0; k--) text += pieces[rand(pieces.length)];
    const out = md(text);
    for (const m of out.matchAll(TAG)) assert.ok(ALLOWED.has(m[2]), `${m[0]} from ${JSON.stringify(text)}`);
    assert.ok(!/<(?!\/?[a-z0-9]+(?: (?:class|href|rel|target)="[^"<>]*")*>)/.test(out), `stray < from ${JSON.stringify(text)}: ${out}`);
    for (const m of out.matchAll(/href="([^"]*)"/g)) assert.match(m[1], /^https?:\/\//i);
  }
});

test("past the size cap the text is shown escaped, unparsed", () => {
  const big = "*".repeat(200001) + "<b>";
  const out = md(big);
  assert.ok(out.startsWith('<div class="text">') && out.endsWith("&lt;b&gt;</div>"));
});

test("unclosed delimiters stay linear", () => {
  const t0 = Date.now();
  md("[*_`".repeat(40000));
  md("**a ".repeat(40000));
  assert.ok(Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
});

test("ANSI colours become spans; other escapes are dropped; text is escaped", () => {
  assert.equal(ansi("\u001b[1;31mred<\u001b[0m ok\u001b[2K"), '<span class="ansi-b" style="color:#cd3131">red&lt;</span> ok');
  assert.equal(ansi("plain <b>"), "plain &lt;b&gt;");
});

test("highlight escapes what it does not colour, and diff marks lines", () => {
  assert.equal(highlight("x = '<a>'", "f.py"), 'x = <span class="s">&#x27;&lt;a&gt;&#x27;</span>');
  assert.equal(diff("a\nb", "a\nc"), '<pre class="diff"><div class="">  a</div><div class="add">+ c</div><div class="del">- b</div></pre>');
});
