#!/usr/bin/env node
// Runs Pi 1.6.0's own AgentSession.navigateTree on a copy of a session and prints what it did, as
// JSON: the reference for `pitools navigate` (tests/golden/navigate_cases.py records it).
//
//   node scripts/pi_navigate.mjs SESSION --to ID [--from ID|null] [--summarize] [--label TEXT]
//        [--answer TEXT] [--context-window N] [--reserve-tokens N] [--contexts ID,ID,...]
//
// agent-session.js cannot be imported under Node 20 (see the oracle's README), so the method's
// source text is read from the file and run unchanged with a stand-in `this`: Pi's real
// SessionManager on a temp copy, a fake model whose stream records each request and answers
// --answer (default "<<summary>>"), no extensions. Prints:
//   plan:      collectEntriesForBranchSummary + prepareBranchEntries for (from, to)
//   requests:  each summarization request's user prompt
//   result:    navigateTree's return value ({editorText, cancelled, summaryEntry}) or {error}
//   landing:   the argument of the leaf move Pi made (branch / branchWithSummary / resetLeaf)
//   leafAfter: sm.getLeafId() afterwards
//   appended:  the lines Pi appended to the file, parsed
//   contexts:  {id: buildSessionContext() at that id} on the session afterwards (reloaded from disk)
//   contextAfter (--context-after): buildSessionContext() at leafAfter, reloaded from disk
// The input file is never modified.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
    const o = { session: null, from: undefined, to: undefined, summarize: false, label: undefined };
    o.answer = "<<summary>>";
    o.contextWindow = 200000;
    o.reserveTokens = 16384;
    o.contexts = [];
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => argv[++i];
        if (a === "--to") o.to = next();
        else if (a === "--from") {
            const v = next();
            o.from = v === "null" ? null : v;
        } else if (a === "--summarize") o.summarize = true;
        else if (a === "--label") o.label = next();
        else if (a === "--answer") o.answer = next();
        else if (a === "--context-window") o.contextWindow = Number(next());
        else if (a === "--reserve-tokens") o.reserveTokens = Number(next());
        else if (a === "--contexts") o.contexts = next().split(",").filter(Boolean);
        else if (a === "--context-after") o.contextAfter = true;
        else if (!o.session) o.session = a;
        else throw new Error(`unexpected argument ${a}`);
    }
    if (!o.session) throw new Error("usage: pi_navigate.mjs SESSION --to ID [...]");
    return o;
}

function methodSource(text, signature) {
    // The method body: from the signature to its closing brace at the same indentation.
    const start = text.indexOf(signature);
    if (start < 0) throw new Error(`method not found: ${signature.trim()}`);
    const indent = signature.match(/^\s*/)[0];
    const end = text.indexOf(`\n${indent}}\n`, start);
    return text.slice(start, end + indent.length + 2).trim();
}

const idOf = (e) => (e && typeof e === "object" ? e.id : undefined);
const sorted = (s) => [...s].sort();

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const piRoot = process.env.PI_REF_DIR;
    if (!piRoot) throw new Error("set PI_REF_DIR to the installed @earendil-works/pi-coding-agent@1.6.0");
    const core = path.join(piRoot, "dist", "core");
    const load = (rel) => import(pathToFileURL(path.join(core, rel)).href);
    const SM = await load("session-manager.js");
    const B = await load("compaction/branch-summarization.js");
    const piAi = path.join(piRoot, "..", "pi-ai", "dist", "index.js");
    const { contentText } = await import(pathToFileURL(piAi).href);

    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-navigate-"));
    const file = path.join(tmp, "session.jsonl");
    fs.copyFileSync(o.session, file);
    try {
        const sm = SM.SessionManager.open(file, tmp);
        if (o.from === null) sm.resetLeaf();
        else if (o.from !== undefined) sm.branch(o.from);
        const fromId = sm.getLeafId();
        const sizeBefore = fs.statSync(file).size;
        const out = { fromId };

        const model = {
            id: "ref-model",
            name: "ref-model",
            api: "ref",
            provider: "ref",
            reasoning: false,
            input: ["text"],
            contextWindow: o.contextWindow,
            maxTokens: 8192,
        };
        const requests = [];
        const streamFn = async (_m, context) => {
            const user = (context.messages ?? []).filter((m) => m.role === "user");
            const prompt = user.map((m) => m.content.map((b) => b.text).join("")).join("\n");
            requests.push({ prompt });
            const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
            return {
                result: async () => ({
                    role: "assistant",
                    content: [{ type: "text", text: o.answer }],
                    api: "ref",
                    provider: "ref",
                    model: "ref-model",
                    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zero },
                    stopReason: "stop",
                    timestamp: 0,
                }),
            };
        };

        if (o.to !== undefined && fromId) {
            try {
                const col = B.collectEntriesForBranchSummary(sm, fromId, o.to);
                const budget = (model.contextWindow || 128000) - o.reserveTokens;
                const prep = B.prepareBranchEntries(col.entries, budget);
                out.plan = {
                    commonAncestorId: col.commonAncestorId ?? null,
                    entries: col.entries.map(idOf),
                    tokenBudget: budget,
                    prepared: {
                        messages: prep.messages,
                        fileOps: { read: sorted(prep.fileOps.read), written: sorted(prep.fileOps.written), edited: sorted(prep.fileOps.edited) },
                        totalTokens: prep.totalTokens,
                    },
                };
            } catch (e) {
                out.plan = { error: String(e) };
            }
        }

        const text = fs.readFileSync(path.join(core, "agent-session.js"), "utf8");
        const src = methodSource(text, "    async navigateTree(targetId, options = {}) {");
        const navigateTree = new Function(
            "collectEntriesForBranchSummary",
            "generateBranchSummary",
            "contentText",
            `"use strict"; return async function ${src.replace(/^async /, "")};`,
        )(B.collectEntriesForBranchSummary, B.generateBranchSummary, contentText);

        const landing = [];
        for (const name of ["branch", "branchWithSummary", "resetLeaf"]) {
            const orig = sm[name].bind(sm);
            sm[name] = (...args) => {
                landing.push({ call: name, leaf: name === "resetLeaf" ? null : args[0] });
                return orig(...args);
            };
        }
        const self = {
            isStreaming: false,
            _promptPreflightCount: 0,
            isCompacting: false,
            sessionManager: sm,
            model,
            settingsManager: {
                getBranchSummarySettings: () => ({ reserveTokens: o.reserveTokens, skipPrompt: false }),
                getRetrySettings: () => undefined,
            },
            _extensionRunner: { hasHandlers: () => false, emit: async () => undefined },
            _getSummarizationRequestAuth: async (m) => ({ model: m, apiKey: "key" }),
            agent: { streamFunction: streamFn },
            _summarizationRetryCallbacks: () => undefined,
            _refreshFinalizedContext: () => {},
            _restoreToolsFromTranscript: () => {},
            _resolveIdleWaitIfIdle: () => {},
        };
        if (o.to !== undefined) {
            try {
                const res = await navigateTree.call(self, o.to, { summarize: o.summarize, label: o.label });
                out.result = res;
            } catch (e) {
                out.result = { error: String(e) };
            }
        }
        out.requests = requests;
        out.landing = landing;
        out.leafAfter = sm.getLeafId() ?? null;
        const after = fs.readFileSync(file);
        out.appended = after
            .subarray(sizeBefore)
            .toString("utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l));
        if (o.contextAfter) {
            // Pi's context at the leaf it ended on, from the file as it is now on disk.
            const again = SM.SessionManager.open(file, tmp);
            const entries = again.getEntries();
            const byId = new Map(entries.map((e) => [e.id, e]));
            out.contextAfter = SM.buildSessionContext(entries, sm.getLeafId() ?? null, byId);
        }
        if (o.contexts.length) {
            const again = SM.SessionManager.open(file, tmp);
            out.entryCount = again.getEntries().length;
            out.contexts = {};
            const entries = again.getEntries();
            const byId = new Map(entries.map((e) => [e.id, e]));
            for (const id of o.contexts) {
                const leaf = id === "null" ? null : id;
                out.contexts[id] = SM.buildSessionContext(entries, leaf, byId);
            }
        }
        process.stdout.write(JSON.stringify(out) + "\n");
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

main().catch((e) => {
    process.stdout.write(JSON.stringify({ error: String(e && e.stack ? e.stack : e) }) + "\n");
    process.exit(1);
});
