#!/usr/bin/env node
// pi_probe_deep: what Pi 1.6.0 does with a session line nested DEPTH levels deep (default 200,000),
// the evidence behind validate's deep-nesting findings (`pi-would-crash` for values V8's
// JSON.stringify cannot write, `unparsed-line` for a line pitools cannot parse).
//
// usage: PI_REF_DIR=.../pi-coding-agent node scripts/pi_probe_deep.mjs [DEPTH] [--position P]
//            [--version 3|2] [--kind array|object] [--json] [--write FILE]
//        PI_REF_DIR=... node scripts/pi_probe_deep.mjs --bisect [--position P] [--version V] [--kind K]
//
// Writes a small session to a temp folder: a user message, then one entry holding a value nested
// DEPTH arrays (or objects {"a": ...}) deep at POSITION, then a final user message, and runs Pi's
// own steps on it, printing per step "ok" or what it throws:
//   SessionManager.open (a v1/v2 file is migrated and rewritten here), buildSessionContext,
//   estimateTokens of every context message (token estimates, auto-compaction, context usage),
//   prepareCompaction(getBranch()) (the /compact plan), serializeConversation of the context
//   (what the summarizer is sent), JSON.stringify of the context messages (an upper bound of the
//   request body: the providers drop fields they do not send) and of every entry (a rewrite).
// Positions: args (an assistant tool call's arguments {x: DEEP}), toolsAdded (a system message's
//   toolsAdded [DEEP]), details (a tool result's details {x: DEEP}), content (an extra field of a
//   user message's text block), custom (a custom entry's data {x: DEEP}: not in the context),
//   custom-message (a custom_message entry's details {x: DEEP}).
// --json prints {depth, position, version, kind, steps: {name: null | error text}}; --write FILE
//   also writes the probed session there (before Pi touches it), for pitools to check the same bytes.
// --bisect prints, per step, the smallest DEPTH (of the nested value itself) at which it throws
//   (null when it does not throw at 20,000), as JSON.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
function option(name, fallback) {
    const i = argv.indexOf(name);
    if (i < 0) return fallback;
    const value = argv[i + 1];
    argv.splice(i, 2);
    return value;
}
const bisect = argv.includes("--bisect");
const asJson = argv.includes("--json");
const position = option("--position", "args");
const version = Number(option("--version", "3"));
const kind = option("--kind", "array");
const keep = option("--write", null);
const positional = argv.filter((a) => !a.startsWith("--"));
const depth = Number(positional[0] ?? 200000);
const root = process.env.PI_REF_DIR;
if (!root) {
    process.stderr.write("set PI_REF_DIR to the installed @earendil-works/pi-coding-agent folder\n");
    process.exit(2);
}
const core = path.join(root, "dist", "core");
const SM = await import(pathToFileURL(path.join(core, "session-manager.js")).href);
const C = await import(pathToFileURL(path.join(core, "compaction", "compaction.js")).href);
const U = await import(pathToFileURL(path.join(core, "compaction", "utils.js")).href);
const M = await import(pathToFileURL(path.join(core, "messages.js")).href);

const t = "2026-01-01T00:00:00.000Z";
const MARK = '"__DEEP__"';

function nested(d) {
    return kind === "object" ? '{"a":'.repeat(d) + "0" + "}".repeat(d) : "[".repeat(d) + "]".repeat(d);
}

function sessionText(d) {
    const base = { timestamp: t };
    const middle = {
        args: { type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "edit", arguments: { x: "__DEEP__" } }], stopReason: "toolUse", timestamp: 2 } },
        toolsAdded: { type: "message", message: { role: "system", content: "", toolsAdded: ["__DEEP__"], timestamp: 2 } },
        details: { type: "message", message: { role: "toolResult", toolCallId: "c0", toolName: "read", content: [{ type: "text", text: "r" }], details: { x: "__DEEP__" }, isError: false, timestamp: 2 } },
        content: { type: "message", message: { role: "user", content: [{ type: "text", text: "t", x: "__DEEP__" }], timestamp: 2 } },
        custom: { type: "custom", customType: "probe", data: { x: "__DEEP__" } },
        "custom-message": { type: "custom_message", customType: "probe", content: "c", display: true, details: { x: "__DEEP__" } },
    }[position];
    if (!middle) throw new Error(`unknown position ${position}`);
    const entries = [
        { type: "message", message: { role: "user", content: "go", timestamp: 1 } },
        middle,
        { type: "message", message: { role: "user", content: "more", timestamp: 3 } },
    ];
    const header = { type: "session", version, id: "probe", timestamp: t, cwd: os.tmpdir() };
    const lines = [JSON.stringify(header)];
    let parent = null;
    entries.forEach((e, i) => {
        const id = `e${i}`;
        lines.push(JSON.stringify({ ...e, id, parentId: parent, ...base }).replace(MARK, nested(d)));
        parent = id;
    });
    return lines.join("\n") + "\n";
}

function run(d) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-probe-deep-"));
    const file = path.join(dir, "session.jsonl");
    fs.writeFileSync(file, sessionText(d));
    if (keep) fs.copyFileSync(file, keep);
    const steps = {};
    function step(name, fn) {
        try {
            const value = fn();
            steps[name] = null;
            return value;
        } catch (e) {
            steps[name] = String(e).slice(0, 100);
            return undefined;
        }
    }
    const sm = step("SessionManager.open", () => SM.SessionManager.open(file, dir));
    const ctx = sm && step("buildSessionContext", () => sm.buildSessionContext());
    if (ctx) {
        step("estimateTokens", () => ctx.messages.reduce((n, m) => n + C.estimateTokens(m), 0));
        step("prepareCompaction", () => C.prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 1 }));
        step("serializeConversation", () => U.serializeConversation(M.convertToLlm(ctx.messages)));
        step("JSON.stringify(messages)", () => JSON.stringify(ctx.messages));
    }
    if (sm) step("JSON.stringify(every entry)", () => sm.getEntries().map((e) => JSON.stringify(e)).join("\n"));
    fs.rmSync(dir, { recursive: true, force: true });
    return steps;
}

if (bisect) {
    const names = Object.keys(run(1));
    const first = {};
    for (const name of names) {
        let lo = 1, hi = 20000;
        if (run(hi)[name] === null) {
            first[name] = null;
            continue;
        }
        while (hi - lo > 1) {
            const mid = (lo + hi) >> 1;
            if (run(mid)[name] === null) lo = mid;
            else hi = mid;
        }
        first[name] = hi;
    }
    console.log(JSON.stringify({ position, version, kind, firstThrowingDepth: first }));
} else {
    const steps = run(depth);
    if (asJson) console.log(JSON.stringify({ depth, position, version, kind, steps }));
    else {
        console.log(`depth ${depth}, position ${position}, v${version}, ${kind}`);
        for (const [name, error] of Object.entries(steps)) console.log(`${name}: ${error === null ? "ok" : `throws ${error}`}`);
    }
}
