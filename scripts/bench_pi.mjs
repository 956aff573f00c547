#!/usr/bin/env node
// bench_pi: do with the real Pi 1.6.0 what `pitools context` / `pitools compact --dry-run` do,
// so scripts/bench.py can time both as whole processes side by side.
//
// usage: node scripts/bench_pi.mjs context|compact|export-html|load|load-context|load-compact SESSION.jsonl
//
//   load     SessionManager.open() on a temp copy (load + migrate), nothing else
//   context  the same work as `pitools context --format json`: load, then at Pi's default leaf
//            getBranch() (path), buildContextEntries, buildSessionProjection (projection,
//            messages, model, thinking level), estimateTokens of every message and
//            estimateProjectedContextTokens, in pitools' JSON shape, JSON.stringify to stdout
//   compact  the same work as `pitools compact --dry-run --format json`: load, then
//            prepareCompaction(getBranch(), DEFAULT_COMPACTION_SETTINGS) (what
//            AgentSession.compact() prepares), the context estimate shouldCompact reads,
//            serializeConversation(convertToLlm(...)) of the messages to summarize and of the
//            turn prefix, JSON.stringify to stdout
//   export-html
//            what `pi --export SESSION out.html` does (exportFromFile: load, the page with the
//            session embedded, written to a file in the temp folder); pitools' counterpart is
//            `pitools export SESSION --format html -o OUT`, a different page of the same session
//   load-context, load-compact
//            the older, lighter baselines: buildSessionContext only / prepareCompaction plus the
//            serialized conversation (no projection, estimates or turn prefix text)
//
// Pi is found like the reference oracle does: $PI_REF_DIR, then .pi-ref/ (what bench.py installs),
// then ../shared/reference/ref, then ./node_modules. The input is copied to a private temp folder first because SessionManager
// appends "\n" to a torn last line and rewrites files it migrates. Phase times (ms) go to
// stderr as one JSON line: {"importMs", "copyMs", "openMs", "workMs", "stringifyMs", "writeMs"}.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const t0 = performance.now();
const HERE = path.dirname(fileURLToPath(import.meta.url));

function findPiRoot() {
    const candidates = [
        process.env.PI_REF_DIR,
        path.join(HERE, "..", ".pi-ref", "node_modules", "@earendil-works", "pi-coding-agent"),
        path.join(HERE, "..", "..", "shared", "reference", "ref", "node_modules", "@earendil-works", "pi-coding-agent"),
        path.join(process.cwd(), "node_modules", "@earendil-works", "pi-coding-agent"),
    ].filter(Boolean);
    for (const c of candidates) {
        if (fs.existsSync(path.join(c, "dist", "core", "session-manager.js"))) return c;
    }
    throw new Error(`pi-coding-agent not found (tried ${candidates.join(", ")}); set PI_REF_DIR`);
}

const [mode, file] = process.argv.slice(2);
const MODES = ["context", "compact", "export-html", "load", "load-context", "load-compact"];
if (!MODES.includes(mode) || !file) {
    process.stderr.write(`usage: node bench_pi.mjs ${MODES.join("|")} SESSION.jsonl\n`);
    process.exit(2);
}

const piRoot = findPiRoot();
const core = path.join(piRoot, "dist", "core");
// pitools' replay documents name the Pi release they mirror first ("pi": "1.6.0"): so does this one.
const PI_VERSION = JSON.parse(fs.readFileSync(path.join(piRoot, "package.json"), "utf8")).version;
const load = (rel) => import(pathToFileURL(path.join(core, rel)).href);
const SM = await load("session-manager.js");
const C = await load("compaction/compaction.js");
const U = await load("compaction/utils.js");
const M = await load("messages.js");
const t1 = performance.now();

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
try {
    const tmpFile = path.join(tmpDir, path.basename(file));
    fs.copyFileSync(file, tmpFile);
    const t2 = performance.now();
    if (mode === "export-html") {
        // Pi's CLI imports the exporter for --export; it opens the session itself.
        const E = await load("export-html/index.js");
        const out = path.join(tmpDir, "out.html");
        const t3 = performance.now();
        await E.exportFromFile(tmpFile, out);
        const t4 = performance.now();
        const round = (x) => Math.round(x * 10) / 10;
        fs.writeSync(1, JSON.stringify({ outputBytes: fs.statSync(out).size }) + "\n");
        process.stderr.write(
            JSON.stringify({ importMs: round(t1 - t0), copyMs: round(t2 - t1), exportMs: round(t4 - t3) }) + "\n",
        );
        fs.rmSync(tmpDir, { recursive: true, force: true }); // process.exit skips the finally below
        process.exit(0);
    }
    const sm = SM.SessionManager.open(tmpFile, tmpDir);
    const t3 = performance.now();
    let result = null;
    if (mode === "context") {
        const entries = sm.getEntries();
        const leafId = sm.getLeafId();
        const branch = sm.getBranch();
        const contextEntries = SM.buildContextEntries(entries, leafId, sm.byId);
        const projection = SM.buildSessionProjection(entries, leafId, sm.byId);
        result = {
            pi: PI_VERSION,
            leafId: leafId ?? null,
            path: branch.map((e) => e.id),
            contextEntries: contextEntries.map((e) => e.id),
            projection: projection.entries.map((pe) => ({
                sourceId: pe.sourceEntry.id,
                sourceType: pe.sourceEntry.type,
                messages: pe.messages,
            })),
            messages: projection.messages,
            thinkingLevel: projection.thinkingLevel,
            model: projection.model,
            tokenEstimates: projection.messages.map((m) => C.estimateTokens(m)),
            estimatedContextTokens: C.estimateProjectedContextTokens(projection, branch),
        };
    } else if (mode === "compact") {
        const branch = sm.getBranch();
        const projection = SM.buildSessionProjection(sm.getEntries(), sm.getLeafId(), sm.byId);
        const tokens = C.estimateProjectedContextTokens(projection, branch).tokens;
        const settings = { ...C.DEFAULT_COMPACTION_SETTINGS };
        const prep = C.prepareCompaction(branch, settings);
        result = {
            shouldCompact: C.shouldCompact(tokens, 200000, settings),
            tokens,
            preparation: prep
                ? {
                      ...prep,
                      fileOps: {
                          read: [...prep.fileOps.read].sort(),
                          written: [...prep.fileOps.written].sort(),
                          edited: [...prep.fileOps.edited].sort(),
                      },
                      serializedConversation: U.serializeConversation(M.convertToLlm(prep.messagesToSummarize)),
                      serializedTurnPrefix: prep.isSplitTurn
                          ? U.serializeConversation(M.convertToLlm(prep.turnPrefixMessages))
                          : null,
                  }
                : null,
        };
    } else if (mode === "load-context") {
        result = SM.buildSessionContext(sm.getEntries(), sm.getLeafId(), sm.byId);
    } else if (mode === "load-compact") {
        const prep = C.prepareCompaction(sm.getBranch(), { ...C.DEFAULT_COMPACTION_SETTINGS });
        if (prep) {
            result = {
                ...prep,
                fileOps: {
                    read: [...prep.fileOps.read].sort(),
                    written: [...prep.fileOps.written].sort(),
                    edited: [...prep.fileOps.edited].sort(),
                },
                serializedConversation: U.serializeConversation(M.convertToLlm(prep.messagesToSummarize)),
                serializedTurnPrefix: prep.isSplitTurn
                    ? U.serializeConversation(M.convertToLlm(prep.turnPrefixMessages))
                    : null,
            };
        }
    } else {
        result = { entries: sm.getEntries().length };
    }
    const t4 = performance.now();
    const text = JSON.stringify(result);
    const t5 = performance.now();
    fs.writeSync(1, text + "\n");
    const t6 = performance.now();
    const round = (x) => Math.round(x * 10) / 10;
    process.stderr.write(
        JSON.stringify({
            importMs: round(t1 - t0),
            copyMs: round(t2 - t1),
            openMs: round(t3 - t2),
            workMs: round(t4 - t3),
            stringifyMs: round(t5 - t4),
            writeMs: round(t6 - t5),
            outputBytes: Buffer.byteLength(text) + 1,
        }) + "\n",
    );
} finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
}
