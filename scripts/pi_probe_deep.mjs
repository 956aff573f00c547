#!/usr/bin/env node
// pi_probe_deep: what Pi 1.6.0 does with a session line nested DEPTH levels deep (default 200,000),
// the evidence behind the grade of validate's `unparsed-line` (a line pitools cannot parse).
//
// usage: PI_REF_DIR=.../pi-coding-agent node scripts/pi_probe_deep.mjs [DEPTH]
//
// Writes a three-entry v3 session to a temp folder whose last assistant reply carries a tool call
// with arguments nested DEPTH arrays deep, then runs Pi's own steps on it and prints, per step,
// "ok" or what it throws: SessionManager.open, buildSessionContext, estimateTokens of every
// message (compaction and the context estimate), JSON.stringify of the messages (the request
// body) and of every entry (a rewrite, as after a migration).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const depth = Number(process.argv[2] ?? 200000);
const root = process.env.PI_REF_DIR;
if (!root) {
    process.stderr.write("set PI_REF_DIR to the installed @earendil-works/pi-coding-agent folder\n");
    process.exit(2);
}
const core = path.join(root, "dist", "core");
const SM = await import(pathToFileURL(path.join(core, "session-manager.js")).href);
const C = await import(pathToFileURL(path.join(core, "compaction", "compaction.js")).href);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-probe-deep-"));
const file = path.join(dir, "session.jsonl");
const t = "2026-01-01T00:00:00.000Z";
const deep = "[".repeat(depth) + "]".repeat(depth);
const lines = [
    JSON.stringify({ type: "session", version: 3, id: "probe", timestamp: t, cwd: dir }),
    JSON.stringify({ type: "message", id: "u1", parentId: null, timestamp: t, message: { role: "user", content: "go", timestamp: 1 } }),
    JSON.stringify({
        type: "message", id: "a1", parentId: "u1", timestamp: t,
        message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "edit", arguments: { x: 0 } }], stopReason: "toolUse", timestamp: 2 },
    }).replace('{"x":0}', `{"x":${deep}}`),
];
fs.writeFileSync(file, lines.join("\n") + "\n");

function step(name, fn) {
    try {
        const value = fn();
        console.log(`${name}: ok`);
        return value;
    } catch (e) {
        console.log(`${name}: throws ${String(e).slice(0, 100)}`);
        return undefined;
    }
}
console.log(`depth ${depth}`);
const sm = step("SessionManager.open", () => SM.SessionManager.open(file, dir));
const ctx = sm && step("buildSessionContext", () => sm.buildSessionContext());
if (ctx) {
    step("estimateTokens (every message)", () => ctx.messages.reduce((n, m) => n + C.estimateTokens(m), 0));
    step("JSON.stringify(messages) (request body)", () => JSON.stringify(ctx.messages));
}
if (sm) step("JSON.stringify(every entry) (a rewrite)", () => sm.getEntries().map((e) => JSON.stringify(e)).join("\n"));
fs.rmSync(dir, { recursive: true, force: true });
