#!/usr/bin/env node
// Record Node's answers for pitools/core/js/value.py into tests/unit/fixtures/jsvalue/cases.json.
//
//   TZ=UTC node scripts/record_jsvalue_fixtures.mjs
//
// Every input is raw JSON *text*: Python parses it itself (orjson, falling back to json.loads), exactly as
// pitools parses session files, so big integers, 1e400 and lone-surrogate escapes reach both sides the
// way they reach Pi.  For each input the fixture holds what Node computes from JSON.parse(text):
//   stringify  JSON.stringify(v)             (null when it returns undefined)
//   length     JSON.stringify(v).length
//   keys       Object.keys(v)                (plain objects only, else null)
//   truthy     !!v
//   string     String(v)                     (null, with string_throws: true, when it throws a TypeError)
//   date       new Date(v).getTime()         (null for NaN; date_throws: true when it throws a TypeError)
//   slices     [n, sliceHead(v, n), sliceTail(v, n)] for several n (string values only; Pi's
//              core/tools/truncate.js functions, copied below -- set PI_TRUNCATE_JS to Pi's file to have
//              the copy checked against the real thing)
//   strlen     v.length                      (string values only)
// A case with "undef": true has every string "@@undefined@@" in the parsed value replaced by undefined.
//
// Hand-picked edge cases come first, then deterministic pseudo-random ones (fixed seed).  Environment:
//   JSVALUE_OUT            output path (default: the committed fixture)
//   JSVALUE_RANDOM_JSON    number of random JSON documents      (default 300)
//   JSVALUE_RANDOM_DATES   number of random date strings        (default 900)
//   JSVALUE_RANDOM_NUMBERS number of random number literals     (default 300)
//   JSVALUE_SEED           PRNG seed                            (default 20250301)
// Larger counts with a different JSVALUE_OUT make a one-off differential fuzz run; the test suite reads the
// file named by PITOOLS_JSVALUE_FIXTURE too, when set.

import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

if (process.env.TZ !== "UTC") {
  console.error("run with TZ=UTC (Pi's reference oracle forces it)");
  process.exit(2);
}

const here = dirname(fileURLToPath(import.meta.url));
const OUT = resolve(process.env.JSVALUE_OUT ?? resolve(here, "../tests/unit/fixtures/jsvalue/cases.json"));
const N_JSON = Number(process.env.JSVALUE_RANDOM_JSON ?? 300);
const N_DATES = Number(process.env.JSVALUE_RANDOM_DATES ?? 900);
const N_NUMBERS = Number(process.env.JSVALUE_RANDOM_NUMBERS ?? 300);
const SEED = Number(process.env.JSVALUE_SEED ?? 20250301);

// ---- Pi 1.6.0 core/tools/truncate.js (verbatim logic) ----
function isHighSurrogate(code) {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLowSurrogate(code) {
  return code >= 0xdc00 && code <= 0xdfff;
}
let sliceHead = function (text, maxUnits) {
  const end = Math.max(0, maxUnits);
  return isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))
    ? text.slice(0, end - 1)
    : text.slice(0, end);
};
let sliceTail = function (text, maxUnits) {
  if (maxUnits <= 0) return "";
  const start = Math.max(0, text.length - maxUnits);
  return isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))
    ? text.slice(start + 1)
    : text.slice(start);
};
let piTruncate = null;
if (process.env.PI_TRUNCATE_JS) {
  piTruncate = await import(pathToFileURL(resolve(process.env.PI_TRUNCATE_JS)).href);
}

// ---- deterministic PRNG (mulberry32) ----
let state = SEED >>> 0;
function rand() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;
const pad = (n, w) => String(n).padStart(w, "0");

// ---- random JSON text ----
const hex4 = (u) => "\\u" + u.toString(16).padStart(4, "0");
const STRING_PIECES = [
  () => pick(["hello", "world", "a", "", " ", "Ω", "é", "日本語", "ß", "naïve", "tool_call", "x".repeat(int(1, 40))]),
  () => pick(["😀", "🎉", "👍🏽", "👨‍👩‍👧", "𝄞", "🇫🇷", "\u{10ffff}", "\u{1f600}"]),
  () => pick(["\\n", "\\t", "\\r", "\\b", "\\f", "\\\"", "\\\\", "\\/", "\\u0000", "\\u001f", "\\u007f"]),
  () => hex4(int(0, 0x1f)),
  () => pick(["\u2028", "\u2029", "\u007f", "\u0080", "\u00a0", "\ufeff", "\ufffd", "\uffff"]),
  () => hex4(int(0xd800, 0xdbff)), // lone high surrogate escape (may pair with a following low one)
  () => hex4(int(0xdc00, 0xdfff)), // lone low surrogate escape
  () => hex4(int(0xd800, 0xdbff)) + hex4(int(0xdc00, 0xdfff)), // escaped valid pair
  () => hex4(int(0x20, 0xd7ff)),
  () => String.fromCodePoint(int(0x20, 0x7e)).replace(/["\\]/, "_"),
  () => String.fromCodePoint(int(0xa0, 0xd7ff)),
  () => String.fromCodePoint(int(0x10000, 0x10ffff)),
  () => pick(["2025-03-01T10:00:00.000Z", "1e21", "-0", "NaN", "Infinity", "null", "true", "{}", "[]"]),
  // look like JSON structure / orjson float layouts once escaped
  () => pick(["1.0", "2.0,", ".0]", "x.0}", "1e+16", "e+20,", "1e-6", "e-6}", '\\"1\\":', "\\\\", '\\\\\\"', ':1.0,', '{\\"2\\":1.0}']),
];
function randString() {
  let s = "";
  const n = int(0, 6);
  for (let i = 0; i < n; i++) s += pick(STRING_PIECES)();
  return '"' + s + '"';
}
const KEY_POOL = [
  "10", "2", "01", "-1", "0", "1", "4294967295", "4294967294", "4294967296", "9007199254740993", "1.5",
  "1e3", "00", " 1", "1 ", "+1", "", "a", "b", "role", "content", "__proto__", "constructor", "toString",
  "ß", "😀", "Z", "z", "10a", "123456789", "٣", "length",
];
function randKey() {
  if (chance(0.15)) return randString();
  if (chance(0.2)) return '"' + String(int(0, 50)) + '"';
  return JSON.stringify(pick(KEY_POOL));
}
const NUMBER_LITERALS = [
  "0", "-0", "0.0", "-0.0", "1", "-1", "200.0", "200", "1e21", "1E21", "1e+21", "9.999999999999999e20",
  "999999999999999999999", "123456789012345680000", "123456789012345678901", "1e-7", "1.5e-7", "1e-6",
  "0.000001", "0.0000001", "0.00000123", "5e-324", "2.5e-324", "1e-400", "1.7976931348623157e308",
  "1.7976931348623159e308", "1e309", "-1e309", "9007199254740991", "9007199254740992", "9007199254740993",
  "-9007199254740993", "9007199254740995", "18446744073709551615", "18446744073709551616",
  "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
  "1" + "0".repeat(400), "0.1", "0.2", "0.30000000000000004", "100", "1e2", "1.0e0", "12345678901234567890.5",
  "1e16", "1e15", "123e-20", "4.35", "0.5", "1.25e25", "-1.5e-9", "3.14159", "2e-7", "1.7976931348623157e+308",
  "4294967295", "4294967296", "1e100", "1.234e-5", "0.00001", "1e-5", "8.64e15", "8640000000000001",
  "-8.64e15", "1735725600123.9", "-1.5", "-0.5", "0.5", "1735689600000",
];
function randNumber() {
  const r = rand();
  if (r < 0.25) return pick(NUMBER_LITERALS);
  if (r < 0.45) return String(int(-1000000, 1000000));
  if (r < 0.55) {
    let s = String(int(1, 9));
    const n = int(10, 40);
    for (let i = 0; i < n; i++) s += String(int(0, 9));
    return (chance(0.5) ? "-" : "") + s;
  }
  if (r < 0.8) {
    // random double from random bits
    const buf = new DataView(new ArrayBuffer(8));
    buf.setUint32(0, Math.floor(rand() * 4294967296));
    buf.setUint32(4, Math.floor(rand() * 4294967296));
    const x = buf.getFloat64(0);
    if (!Number.isFinite(x)) return "1.5";
    return String(x);
  }
  // random decimal literal with random exponent
  let s = String(int(0, 999999)) + (chance(0.6) ? "." + String(int(0, 99999999)) : "");
  if (chance(0.7)) s += pick(["e", "E"]) + pick(["", "+", "-"]) + String(int(0, 330));
  return (chance(0.3) ? "-" : "") + s;
}
const ws = () => (chance(0.1) ? pick([" ", "\n", "\t", "\r\n", "  "]) : "");
function randValue(depth) {
  const r = rand();
  if (depth > 3 || r < 0.45) {
    const s = rand();
    if (s < 0.45) return randString();
    if (s < 0.8) return randNumber();
    return pick(["null", "true", "false"]);
  }
  if (r < 0.75) {
    const n = int(0, 6);
    const members = [];
    for (let i = 0; i < n; i++) members.push(ws() + randKey() + ws() + ":" + ws() + randValue(depth + 1) + ws());
    return "{" + members.join(",") + "}";
  }
  const n = int(0, 5);
  const items = [];
  for (let i = 0; i < n; i++) items.push(ws() + randValue(depth + 1) + ws());
  return "[" + items.join(",") + "]";
}

// ---- random date strings ----
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH_WORDS = ["January", "march", "SEPT", "Sept.", "mAy", "dec", "Octob", "juneteenth", "ma", "Ju"];
const DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Saturday", "monday"];
const ZONES = [
  "Z", "z", "GMT", "UTC", "UT", "utc", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "+00:00",
  "-00:00", "+05:30", "-08:00", "+0530", "-0800", "+05", "-5", "+5:30", "GMT+1", "GMT-0800", "UTC+05:30",
  "GMT+12345", "(CET)", "(Central European Standard Time)", "+24:00", "+23:59", "-23:60", "CET", "BST",
  "Zulu", "GMT+", "+", "-", "+1", "+123", "+12345",
];
function isoDate() {
  const y = pick([
    () => pad(int(0, 9999), 4),
    () => "2025",
    () => "1970",
    () => (chance(0.5) ? "+" : "-") + pad(int(0, 300000), 6),
    () => pick(["+275760", "-271821", "+275761", "-271822", "-000000", "+000000", "+999999"]),
  ])();
  const parts = [y];
  if (chance(0.85)) {
    parts.push(pad(pick([int(1, 12), int(0, 13), 2, 2]), pick([2, 2, 2, 1])));
    if (chance(0.85)) parts.push(pad(pick([int(1, 31), int(0, 32), 29, 30, 31]), pick([2, 2, 2, 1])));
  }
  return parts.join(pick(["-", "-", "-", "-", "/", "."]));
}
function isoTime() {
  let h = pick([int(0, 23), int(0, 25), 24, 0, 23]);
  let t = pad(h, pick([2, 2, 2, 1])) + ":" + pad(pick([int(0, 59), 0, 60]), 2);
  if (chance(0.8)) {
    t += ":" + pad(pick([int(0, 59), 0, 60]), 2);
    if (chance(0.6)) {
      const nd = pick([1, 2, 3, 3, 3, 4, 6, 9, 10, 12]);
      let f = "";
      for (let i = 0; i < nd; i++) f += String(pick([int(0, 9), 0]));
      t += pick([".", ".", ".", ","]) + f;
    }
  }
  return t;
}
function randDate() {
  const r = rand();
  if (r < 0.4) {
    // ES date-time string format, sometimes broken
    let s = isoDate();
    if (chance(0.7)) {
      s += pick(["T", "T", "T", "t", " ", "  ", "_"]) + isoTime();
      if (chance(0.7)) s += pick(["", " "]) + pick(ZONES);
    }
    if (chance(0.3)) s = mutate(s);
    return s;
  }
  if (r < 0.75) {
    // legacy layouts
    const d = int(0, 32);
    const m = pick(MONTHS);
    const y = pick([String(int(1900, 2100)), String(int(0, 99)), pad(int(0, 99), 2), "2025", "10000", "-2025"]);
    const time = chance(0.7)
      ? " " + pick([isoTime(), String(int(1, 12)) + ":" + pad(int(0, 59), 2) + pick([" am", " PM", "pm", " p.m.", ""]), String(int(0, 23)) + "::"])
      : "";
    const zone = chance(0.5) ? " " + pick(ZONES) : "";
    const dow = chance(0.4) ? pick(DAYS) + pick([", ", " ", ","]) : "";
    const layout = pick([
      () => `${dow}${d} ${m} ${y}${time}${zone}`,
      () => `${dow}${m} ${d} ${y}${time}${zone}`,
      () => `${dow}${m} ${d}, ${y}${time}${zone}`,
      () => `${pick(MONTH_WORDS)} ${d} ${y}${time}${zone}`,
      () => `${int(0, 13)}/${d}/${y}${time}${zone}`,
      () => `${y}/${int(0, 13)}/${d}${time}${zone}`,
      () => `${y}-${int(0, 13)}-${d}${time}${zone}`,
      () => `${d}-${m}-${y}${time}${zone}`,
      () => `${y} ${m} ${d}${time}`,
      () => `${d}.${int(1, 12)}.${y}${time}`,
      () => `${time.trim()} ${m} ${d} ${y}`,
      () => `${isoDate()} ${isoTime()}${zone}`,
      () => `${isoDate()}T${isoTime()} ${pick(ZONES)}`,
    ]);
    let s = layout();
    if (chance(0.15)) s = mutate(s);
    return s;
  }
  if (r < 0.9) {
    // token soup
    const toks = [
      () => String(int(0, 100)), () => String(int(0, 3000)), () => pad(int(0, 99), 2), () => String(int(0, 1e9)),
      () => pick(MONTHS), () => pick(DAYS), () => pick(ZONES), () => pick(["am", "pm", "AM", "T", "t", "Z"]),
      () => pick([":", "::", "-", "+", ".", ",", "/", " ", " ", "(", ")", "(x)", "\t", "\n", "\u00a0", "_", "'"]),
      () => pick(["foo", "x", "on", "at", "the", "é", "日", "😀", "\u2028", "\u0000", "noon"]),
    ];
    let s = "";
    const n = int(1, 9);
    for (let i = 0; i < n; i++) s += pick(toks)();
    return s;
  }
  if (r < 0.95) {
    // character soup over the characters the parser cares about
    const alphabet = [..."0123456789000112::--++..()  TtZzAaPpMm/,\tJanFebGMTUTCESTpdt\u00a0x"];
    let s = "";
    const n = int(1, 24);
    for (let i = 0; i < n; i++) s += pick(alphabet);
    return s;
  }
  return mutate(pick(["2025-03-01T10:00:00.000Z", "2025-03-01T10:00:00Z", "Sat, 01 Mar 2025 10:00:00 GMT", "Mar 1, 2025 10:00 AM", "2025-03-01 10:00:00"]));
}
function mutate(s) {
  const chars = [...s];
  const n = int(1, 2);
  for (let k = 0; k < n; k++) {
    const i = int(0, chars.length);
    const c = pick(["0", "9", "-", ":", "T", " ", "Z", "+", ".", "a", "(", ")", "/", ",", "\u00a0", "1"]);
    const op = int(0, 2);
    if (op === 0) chars.splice(i, 0, c);
    else if (op === 1) chars.splice(i, 1);
    else chars.splice(i, 1, c);
  }
  return chars.join("");
}

// ---- hand-picked inputs ----
const HAND_JSON = [
  "null", "true", "false", "0", "-0", "0.0", "-0.0", '""', '" "', '"0"', '"false"', "{}", "[]", "[0]", "[[]]",
  "[null]", "[null,null]", "[1,[2,[3]]]", '["a",null,true,1.5,{}]', "[[1,2],[3]]", '{"a":[]}', "[{}]",
  '"\\u0000\\u0001\\u001f\\u007f\\b\\t\\n\\f\\r\\"\\\\\\/"', '"\u2028\u2029"', '"\\ud800"', '"\\udc00"',
  '"\\udbff\\udfff"', '"\\ud83d\\ude00"', '"\\ude00\\ud83d"', '"a\\ud83d"', '"\\ud83da"', '"😀😀"', '"a😀b"',
  '"\\ud83d\\ud83d\\ude00"', '"\\ud83d\\ude00\\ude00"', '"é\\ud800é"',
  '{"b":1,"a":2,"10":3,"2":4,"01":5,"-1":6,"4294967295":7,"4294967294":8,"1.5":9,"0":10}',
  '{"a":1,"b":2,"a":3}', '{"2":1,"1":2,"2":3}', '{"__proto__":1,"constructor":2}', '{"":1," ":2}',
  '{"x":{"9":1,"8":{"7":[{"b":1,"a":2,"6":3}]}}}', '{"9007199254740993":1,"4294967296":2,"42":3}',
  '{"a":"\\ud800","\\udc00":"b"}', '{"role":"assistant","content":[{"type":"text","text":"hi 😀"}],"usage":{"input":10,"output":2.5,"cost":{"total":0.000123}},"timestamp":1740823200000}',
  ...NUMBER_LITERALS,
  "[1e21,1e-7,200.0,-0.0,5e-324,1e400]", '{"n":123456789012345678901234567890}',
];
const HAND_UNDEFINED = [
  '"@@undefined@@"', '["@@undefined@@"]', '{"a":"@@undefined@@"}', '{"a":"@@undefined@@","b":1}',
  '{"b":1,"a":"@@undefined@@"}', '[1,"@@undefined@@",2]', '{"a":["@@undefined@@",{"b":"@@undefined@@"}]}',
  '{"1":"@@undefined@@","0":"x"}', '[["@@undefined@@"]]',
];
const HAND_THROWS = [
  '{"toString":1}', '{"valueOf":1}', '{"toString":"x","valueOf":"y"}', '[{"toString":null}]', '[[{"toString":1}]]',
  '{"a":{"toString":1}}', '[1,{"valueOf":2}]',
];
const HAND_DATES = [
  "2025-03-01T10:00:00.000Z", "2025-03-01T10:00:00Z", "2025-03-01T10:00Z", "2025-03-01T10:00", "2025-03-01",
  "2025-03", "2025", "+002025-03-01T10:00:00Z", "-000001-01-01T00:00:00Z", "-000000-01-01T00:00:00Z",
  "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00.000Z",
  "-271821-04-19T23:59:59.999Z", "+275760-09-13T01:00:00+01:00", "-271821-04-19T23:00:00-01:00",
  "2025-02-30T10:00:00Z", "2025-02-31", "2025-04-31", "2025-02-29", "2024-02-29", "2025-02-32", "2025-13-01",
  "2025-00-01", "2025-01-00", "2025-01-01T24:00:00Z", "2025-01-01T24:00Z", "2025-01-01T24:00:00.000Z",
  "2025-01-01T24:00:00.001Z", "2025-01-01T24:01:00Z", "2025-01-01T23:59:60Z", "2025-01-01T23:60:00Z",
  "2025-01-01T10:00:00.1Z", "2025-01-01T10:00:00.12Z", "2025-01-01T10:00:00.1234Z",
  "2025-01-01T10:00:00.123456789012Z", "2025-01-01T10:00:00.999999Z", "2025-01-01T10:00:00.Z",
  "2025-01-01T10:00:00+05:30", "2025-01-01T10:00:00-05:30", "2025-01-01T10:00:00+0530", "2025-01-01T10:00:00+05",
  "2025-01-01T10:00:00+24:00", "2025-01-01T10:00:00+23:59", "2025-01-01T10:00:00 Z", "2025-01-01T10:00:00z",
  "2025-01-01t10:00:00Z", "2025-01-01 10:00:00Z", "2025-01-01 10:00:00", "2025-01-01 10:00", "2025-01-01T10",
  "2025-01-01T1:00:00Z", "2025-1-1", "2025-01-1", "2025/03/01", "2025/03/01 10:00", "03/01/2025",
  "3/1/2025 10:00:00 PM", "12/31/99 11:59 pm", "1/1/50", "1/1/49", "1/1/100", "Mar 1 2025", "Mar 1, 2025",
  "March 1, 2025 10:00:00", "1 Mar 2025", "1 March 2025 10:00 GMT+0100", "Sat, 01 Mar 2025 10:00:00 GMT",
  "Sat, 01 Mar 2025 10:00:00 +0000", "Sat, 01 Mar 2025 10:00:00 EST", "Sat Mar 01 2025 10:00:00 GMT+0000 (Coordinated Universal Time)",
  "Sat Mar 01 2025", "Mar 2025", "May 5", "5 May", "2025 Mar 1", "Mar-01-2025", "01-Mar-2025", "not a date",
  "", " ", "0", "1", "12", "31", "32", "99", "100", "2025-01-01\u0000xyz", "[object Object]", "T10:00",
  "10:00", "10:00 2025-01-01", "2025-01-01 10:00 pm", "2025-01-01 13:00 pm", "2025-01-01 12:00 am",
  "2025-01-01 00:00 am", "Jan 1 2025 GMT+596523:", "Jan 1 2025 GMT+1193047:", "Jan 1 2025 10:00 GMT+5",
  "Jan 1 2025 10:00 GMT+05:30", "Jan 1 2025 10:00 +05:30", "Jan 1 2025 10:00 UTC+0530", "Jan 1 2025 10::",
  "Jan 1 2025 10:00:00.5", "Jan 1 2025 10.30", "Jan 1 2025 (comment) 10:00", "Jan 1 2025 (unclosed 10:00",
  "(x) Jan 1 2025", "Jan 1 2025)", "foo 2025-01-01", "foo2025", "2025-01-01 foo", "Tuesday, Jan 1 2025",
  "\t2025-01-01\n", "\u00a02025-01-01", "2025-01-01\u00a0", "\ufeff2025-01-01", "2025-01-01T10:00:00.000Z ",
  " 2025-01-01T10:00:00.000Z", "-2025-01-01", "+2025-01-01", "2025-01-01T10:00:00+05:30:00", "1e3",
  "2025-03-01T10:00:00.000+00:00", "20250301", "20250301T100000Z", "2025-W09", "2025-060",
  // V8 skips a numeral's leading zeros before taking its first 9 digits, but counts them in its length:
  "2025-01-01T10:00:00.0123456789Z", "2025-01-01T10:00:00.012345678Z", "2025-01-01T10:00:00.00099Z",
  "Jan 1 2025 10:00:00.0999", "Jan 1 2025 10:00:00.0000000001234", "0000000000002025-01-01",
  "Jan 000000000000001 2025", "2025-01-01T10:00:00\u2028", "x\u20282025", "x\u00a02025", "x\u30002025",
];
const HAND_DATE_VALUES = [
  "null", "true", "false", "0", "-0", "1", "-1", "1.9", "-1.9", "0.5", "-0.5", "8.64e15", "-8.64e15",
  "8640000000000001", "1e21", "1e400", "-1e400", "1740823200000", "1740823200000.7", "[]", "[0]", "[2025]",
  '["2025-03-01"]', "[2025,3]", "[[2025]]", "[null]", "[true]", '{"a":1}', "{}", '[1740823200000]',
];

// ---- evaluation ----
const UNDEF = "@@undefined@@";
function replaceUndefined(v) {
  if (v === UNDEF) return undefined;
  if (Array.isArray(v)) return v.map(replaceUndefined);
  if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) v[k] = replaceUndefined(v[k]);
    return v;
  }
  return v;
}
function cutPoints(s) {
  const n = s.length;
  const pts = new Set([-1, 0, 1, 2, 3, 5, n - 2, n - 1, n, n + 1]);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      pts.add(i);
      pts.add(i + 1);
      pts.add(n - i);
      pts.add(n - i - 1);
    }
  }
  return [...pts].filter((x) => x >= -1 && x <= n + 1).sort((a, b) => a - b);
}
function evaluate(text, kind, undef = false) {
  let v = JSON.parse(text);
  if (undef) v = replaceUndefined(v);
  const out = JSON.stringify(v);
  // String(v) and new Date(v) throw a TypeError for an object with an own "toString" member (ToPrimitive
  // finds no callable toString/valueOf returning a primitive); record that instead of a value.
  let str = null;
  let strThrows = false;
  try {
    str = String(v);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    strThrows = true;
  }
  let t = NaN;
  let dateThrows = false;
  try {
    t = new Date(v).getTime();
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    dateThrows = true;
  }
  const c = {
    text,
    kind,
    stringify: out === undefined ? null : out,
    length: out === undefined ? null : out.length,
    keys: v !== null && typeof v === "object" && !Array.isArray(v) ? Object.keys(v) : null,
    truthy: !!v,
    string: str,
    date: Number.isNaN(t) ? null : t,
  };
  if (strThrows) c.string_throws = true;
  if (dateThrows) c.date_throws = true;
  if (undef) c.undef = true;
  if (typeof v === "string") {
    c.strlen = v.length;
    c.slices = cutPoints(v).map((n) => {
      const head = sliceHead(v, n);
      const tail = sliceTail(v, n);
      if (piTruncate && (piTruncate.sliceHead(v, n) !== head || piTruncate.sliceTail(v, n) !== tail)) {
        throw new Error(`sliceHead/sliceTail copy differs from Pi's for ${JSON.stringify(v)} at ${n}`);
      }
      return [n, head, tail];
    });
  }
  return c;
}

const cases = [];
const seen = new Set();
function add(text, kind, undef = false) {
  const key = kind + "\u0000" + text;
  if (seen.has(key)) return;
  seen.add(key);
  cases.push(evaluate(text, kind, undef));
}
for (const t of HAND_JSON) add(t, "json");
for (const t of HAND_UNDEFINED) add(t, "json", true);
for (const t of HAND_THROWS) add(t, "json");
for (const d of HAND_DATES) add(JSON.stringify(d), "date");
for (const t of HAND_DATE_VALUES) add(t, "date");
for (let i = 0; i < N_NUMBERS; i++) add(randNumber(), "number");
for (let i = 0; i < N_JSON; i++) add(randValue(0), "json");
for (let i = 0; i < N_DATES; i++) add(JSON.stringify(randDate()), "date");

const header = {
  generator: "scripts/record_jsvalue_fixtures.mjs",
  node: process.version,
  v8: process.versions.v8,
  tz: process.env.TZ,
  seed: SEED,
  count: cases.length,
};
mkdirSync(dirname(OUT), { recursive: true });
// One case per line keeps diffs readable.  JSON.stringify escapes lone surrogates, so the file is valid UTF-8.
const body = cases.map((c) => JSON.stringify(c)).join(",\n");
writeFileSync(OUT, `{"meta":${JSON.stringify(header)},\n"cases":[\n${body}\n]}\n`);
console.log(`wrote ${cases.length} cases to ${OUT}`);
