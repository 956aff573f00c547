// Prints pi-ai's estimateContextTokens (utils/estimate.js, what a request carries) and Pi's
// estimateContextTokens (core/compaction/compaction.js, when Pi compacts) on the same message
// lists, as JSON (tests/unit/request/pi_estimates.json):
//   node tests/unit/request/pi_estimates.mjs <pi-ai folder> <pi-coding-agent folder> > tests/unit/request/pi_estimates.json
// test_estimate.py checks pitools' two estimates against it and re-runs it when node is there.
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [ai, agent] = process.argv.slice(2);
const version = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
const piAi = await import(pathToFileURL(join(ai, "dist", "utils", "estimate.js")).href);
const pi = await import(pathToFileURL(join(agent, "dist", "core", "compaction", "compaction.js")).href);

const text = (t) => [{ type: "text", text: t }];
const user = (t, timestamp = 0) => ({ role: "user", content: text(t), timestamp });
const usage = (totalTokens) => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens });
const assistant = (tokens, timestamp = 0, extra = {}) => ({
  role: "assistant", content: text("ok"), usage: usage(tokens), stopReason: "stop", timestamp, ...extra,
});
const tool = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } };

const cases = {
  "seven characters": [user("abcdefg")],
  "a hundred characters": [user("x".repeat(100))],
  "astral characters count two units": [user("😀".repeat(7))],
  "an image": [{ role: "user", content: [{ type: "image", data: "", mimeType: "image/png" }], timestamp: 0 }],
  "a tool call": [{ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } }],
    usage: usage(0), stopReason: "toolUse", timestamp: 0 }],
  "a system message with tools added and removed": [
    { role: "system", content: "You are helpful.", toolsAdded: [tool], toolsRemoved: [tool], timestamp: 0 }],
  "usage anchors the estimate": [user("q"), assistant(1000, 1), user("x".repeat(70), 2)],
  "an errored reply's usage is not trusted": [user("q"), assistant(1000, 1, { stopReason: "error" }), user("x".repeat(70), 2)],
  "a reply older than the message before it": [user("q", 10), assistant(500, 20), user("x".repeat(35), 30),
    assistant(900, 5), user("x".repeat(35), 40)],
};

const out = { piAi: version(ai), pi: version(agent), cases: [] };
for (const [name, messages] of Object.entries(cases))
  out.cases.push({ name, messages, piAi: piAi.estimateContextTokens(messages).tokens,
    pi: pi.estimateContextTokens(messages).tokens });
const rows = out.cases.map((c) => "  " + JSON.stringify(c)).join(",\n");
console.log(`{"piAi": ${JSON.stringify(out.piAi)}, "pi": ${JSON.stringify(out.pi)},\n "cases": [\n${rows}\n ]}`);
