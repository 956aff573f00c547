// Record what JavaScript (node) answers for the coercions pitools.core.js.ops and
// pitools.core.js.date reproduce. Usage: TZ=UTC node js_ops.mjs > fixtures/js_ops.json
const texts = [
  "null", "true", "false", "0", "-0", "1", "-1", "1.5", "0.1", "1e21", "1e-7", "123456789012345680000",
  "\"\"", "\" \"", "\"12\"", "\" 12 \"", "\"0x1f\"", "\"1e3\"", "\"-Infinity\"", "\"abc\"", "\"\\n\"",
  "\"١٢\"", "\"0b11\"", "\"1_000\"", "[]", "[5]", "[1,2]", "[null]", "[[3]]", "[\"7\"]", "{}", "{\"a\":1}",
  "\"日本語\"", "\"\\ud83d\\ude00\"",
];
const values = texts.map((t) => ({ text: t, value: JSON.parse(t) }));
values.push({ text: "undefined", value: undefined });
const out = { node: process.version, values: [], pairs: [], dates: [] };
for (const { text, value } of values) {
  out.values.push({
    text,
    string: Array.isArray(value) || value === null || typeof value !== "object" ? `${value}` : "[object Object]",
    number: String(Number(value)),
    gtZero: value > 0,
    ceilDiv4: String(Math.ceil(value / 4)),
    joined: [value, null, undefined, value].join("|"),
  });
}
for (const a of values) {
  for (const b of values) {
    if (typeof a.value === "object" && a.value !== null) continue;
    if (typeof b.value === "object" && b.value !== null) continue;
    out.pairs.push({ a: a.text, b: b.text, strictEqual: a.value === b.value, add: String(a.value + b.value) });
  }
}
const times = [0, -1, 1.5, -1.5, 8.64e15, -8.64e15, 8.64e15 + 1, 253402300799999, 253402300800000,
  -62135596800000, -62135596800001, -62198755200000, -30610224000001, 951782400000, 1709164800000, 4107542400000,
  -2208988800000, 1e12, 1234567890123];
for (const t of times) {
  let iso;
  try { iso = new Date(t).toISOString(); } catch (e) { iso = null; }
  out.dates.push({ ms: t, iso });
}
// The UTF-16 code units String.prototype.trim removes (ops.is_blank's whitespace set).
out.trimmed = [];
for (let u = 0; u < 0x10000; u++) if (String.fromCharCode(u).trim() === "") out.trimmed.push(u);
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
