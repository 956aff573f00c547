// Prints pi-ai's own clampMaxTokensToContext and adjustMaxTokensForThinking on a grid of
// windows, caps, contexts and levels, as JSON (tests/unit/request/pi_ai_budget.json).
//   node tests/unit/request/pi_ai_budget.mjs <pi-ai package folder> > tests/unit/request/pi_ai_budget.json
// test_budget_parity.py re-runs it against the installed pi-ai when node is there.
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const version = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
const options = await import(pathToFileURL(join(dir, "dist", "api", "simple-options.js")).href);

const windows = [0, 8000, 32000, 128000, 200000, 1000000];
const caps = [1, 4096, 16384, 64000, 128000];
// A user text (a character repeated) or one assistant message whose usage the estimate trusts.
const contexts = [
  { repeat: ["x", 0] }, { repeat: ["x", 100] }, { repeat: ["x", 3500] }, { repeat: ["x", 70000] },
  { repeat: ["x", 525000] }, { repeat: ["😀", 7001] }, { usage: 0 }, { usage: 150000 }, { usage: 990000 },
];
const messages = (c) => c.repeat
  ? [{ role: "user", content: [{ type: "text", text: c.repeat[0].repeat(c.repeat[1]) }], timestamp: 0 }]
  : [{ role: "assistant", content: [], usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: c.usage },
       stopReason: "stop", timestamp: 0 }];

const clamp = [];
for (const window of windows)
  for (const cap of caps)
    for (const context of contexts)
      clamp.push({ window, cap, context,
        maxTokens: options.clampMaxTokensToContext({ contextWindow: window }, { messages: messages(context) }, cap) });
const adjust = [];
for (const base of [1, 1000, 2000, 16384, 64000])
  for (const modelMax of [1024, 2000, 8000, 64000])
    for (const level of ["minimal", "low", "medium", "high", "xhigh", "max"]) {
      const r = options.adjustMaxTokensForThinking(base, modelMax, level);
      adjust.push({ base, modelMax, level, maxTokens: r.maxTokens, thinkingBudget: r.thinkingBudget });
    }
// One case a line: small diffs when pi-ai changes.
const rows = (xs) => xs.map((x) => "  " + JSON.stringify(x)).join(",\n");
console.log(`{"piAi": ${JSON.stringify(version)},\n "clamp": [\n${rows(clamp)}\n ],\n "adjust": [\n${rows(adjust)}\n ]}`);
