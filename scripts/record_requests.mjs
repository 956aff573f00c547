#!/usr/bin/env node
// Record the provider request bodies pi-ai 1.6.0 builds for golden sessions (`make golden-requests`).
//
// For each golden/<case>/session.jsonl, at the default leaf and up to two other leaves, this builds
// Pi's context exactly as a resumed session would (SessionManager -> buildSessionContext ->
// convertToLlm -> normalizeContext), then calls the real provider adapter's `streamSimple` for every
// model in MODELS with the options Pi's agent passes (sessionId = the session id, reasoning = the
// thinking level, clamped to the model). The body is captured through the `onPayload` hook, which
// pi-ai calls with the exact request before sending; the hook then throws, so nothing is ever sent.
// As a second guard, `fetch` is replaced by a function that always fails, and the API key is a dummy.
//
// Output: golden/<case>/requests.jsonl, {"piAi": version, "case": name, "records": [...]} as JSON lines
// (writeRecording; scripts/golden_store.py reads them and says why they are not compressed), each record
// {leaf, leafArg, model, thinking, level, sessionId, payload} where `payload` is the
// JSON.stringify text of the body (kept as text so its exact bytes can be compared), or `error`.
//
// usage: node scripts/record_requests.mjs [CASE ...]             (default: every golden case)
//        node scripts/record_requests.mjs --settings   (golden/<case>/requests-settings.jsonl: the
//             body under Pi's defaultThinkingLevel / thinkingBudgets settings, SETTINGS_VARIANTS)
//        node scripts/record_requests.mjs --check-wedges   (golden/request-wedges/check-requests.jsonl:
//             the bodies for golden/request-wedges/check-cases.json, written by tests/golden/request_cases.py:
//             small sessions whose shapes pi-ai passes on and a provider refuses, for `request --check`)
//        node scripts/record_requests.mjs --heal   (golden/heal-*/heal.jsonl: Pi's leaf, LLM messages
//             and pi-ai's body for the wedge and its healed forms, see recordHeal)
//        node scripts/record_requests.mjs --heal-folder DIR   (the same for DIR/session.jsonl and its
//             healed forms, into DIR/heal.jsonl: tests/golden/heal_generated.py records its cases so)
//        node scripts/record_requests.mjs --summaries  (golden/summary-requests.json: the bodies of Pi's
//             summarization calls, SUMMARY_CASES x SUMMARY_MODELS x levels; see recordSummaries)
//        node scripts/record_requests.mjs --session FILE --model PROVIDER/ID [--leaf ID] [--thinking L]
//             (one record, printed as JSON on stdout: for trying things out)
// Needs the reference: $PI_REF_DIR (pi-ai is found beside it).
import { createRequire, syncBuiltinESMExports } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

process.env.TZ = "UTC";
const PI_REF_DIR = process.env.PI_REF_DIR;
for (const name of Object.keys(process.env)) {
    // Provider settings read from the environment (PI_CACHE_RETENTION, keys, proxies) must not leak in.
    if (/^(PI_|ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_|GROQ_|HTTPS?_PROXY|ALL_PROXY)/i.test(name)) delete process.env[name];
}
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
let uuidCounter = 0;
nodeCrypto.randomUUID = () => {
    uuidCounter += 1;
    const h = uuidCounter.toString(16).padStart(8, "0");
    return `${h}-0000-4000-8000-${h.padStart(12, "0")}`;
};
syncBuiltinESMExports();

class Captured extends Error {}
globalThis.fetch = async () => {
    throw new Error("record_requests: network access is disabled");
};

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const GOLDEN = path.join(ROOT, "golden");
// "sk-": an OpenAI-style API key (another prefix reads as a ChatGPT sign-in token to pi-ai).
const DUMMY_KEY = "sk-pitools-recording-dummy-key";

// Per API a model without reasoning and one or two with it, each at the session's level (clamped).
export const MODELS = [
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-opus-4-7",
    "openai/gpt-4o",
    "openai/gpt-5",
    "openai/gpt-5.4",
    "groq/llama-3.3-70b-versatile",
    "groq/openai/gpt-oss-120b",
    "deepseek/deepseek-v4-pro",
    "google/gemini-2.5-pro",
    "google/gemini-3.5-flash",
];
// Recorded again at an explicit level (default leaf only).
const MODELS_THINKING = {
    "anthropic/claude-sonnet-4-5": "high",
    "anthropic/claude-opus-4-7": "high",
    "openai/gpt-5": "high",
    "openai/gpt-5.4": "high",
    "groq/openai/gpt-oss-120b": "high",
    "deepseek/deepseek-v4-pro": "off",
    "google/gemini-2.5-pro": "high",
    "google/gemini-3.5-flash": "low",
};
// Other leaves: one model per API.
const MODELS_OTHER_LEAVES = ["anthropic/claude-sonnet-4-5", "openai/gpt-5", "groq/openai/gpt-oss-120b", "google/gemini-2.5-pro"];

function findPiRoot() {
    const candidates = [PI_REF_DIR, path.join(ROOT, ".pi-ref", "node_modules", "@earendil-works", "pi-coding-agent"), "/work/ref/node_modules/@earendil-works/pi-coding-agent"].filter(Boolean);
    for (const c of candidates) if (fs.existsSync(path.join(c, "dist", "core", "session-manager.js"))) return c;
    throw new Error("pi-coding-agent not found: set PI_REF_DIR");
}

async function loadReference() {
    const piRoot = findPiRoot();
    const aiRoot = [path.join(piRoot, "node_modules", "@earendil-works", "pi-ai"), path.join(piRoot, "..", "pi-ai")].find((d) =>
        fs.existsSync(path.join(d, "dist", "api", "transform-messages.js")),
    );
    const core = (rel) => import(pathToFileURL(path.join(piRoot, "dist", "core", rel)).href);
    const ai = (rel) => import(pathToFileURL(path.join(aiRoot, "dist", rel)).href);
    const apis = {
        "anthropic-messages": await ai("api/anthropic-messages.js"),
        "openai-completions": await ai("api/openai-completions.js"),
        "openai-responses": await ai("api/openai-responses.js"),
        "google-generative-ai": await ai("api/google-generative-ai.js"),
    };
    return {
        C: await core("compaction/compaction.js"),
        B: await core("compaction/branch-summarization.js"),
        SM: await core("session-manager.js"),
        M: await core("messages.js"),
        T: await ai("utils/transcript.js"),
        MODELS: await ai("models.js"),
        apis,
        aiRoot,
        version: JSON.parse(fs.readFileSync(path.join(aiRoot, "package.json"), "utf8")).version,
    };
}

function findModel(ref, spec) {
    const slash = spec.indexOf("/");
    const provider = spec.slice(0, slash);
    const id = spec.slice(slash + 1);
    const file = path.join(ref.aiRoot, "dist", "providers", "data", `${provider}.json`);
    const groups = JSON.parse(fs.readFileSync(file, "utf8"));
    let found;
    for (const group of Object.values(groups)) for (const m of Object.values(group)) if (m.id === id && m.type === "chat") found = m;
    if (!found) throw new Error(`unknown model ${spec}`);
    return found;
}

/** The session as Pi resumes it: SessionManager on a private copy (Pi may rewrite a file it migrates). */
function openSession(ref, file) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pitools-req-"));
    const copy = path.join(dir, "session.jsonl");
    fs.copyFileSync(file, copy);
    if (ref.SM.loadEntriesFromFile(copy).length === 0) return { dir, sm: null };
    uuidCounter = 0;
    try {
        return { dir, sm: ref.SM.SessionManager.open(copy, dir) };
    } catch (e) {
        return { dir, sm: null, openError: String(e?.message ?? e) }; // Pi refuses the file
    }
}

function leavesOf(sm) {
    const entries = sm.getEntries();
    const parents = new Set(entries.map((e) => e.parentId));
    return entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
}

/** The thinking level a resumed session starts with (sdk.js): the branch's level, else the default. */
function sessionLevel(sm, leaf, ctx, defaultLevel) {
    const branch = sm.getBranch(leaf);
    return branch.some((e) => e.type === "thinking_level_change") ? ctx.thinkingLevel : (defaultLevel ?? "medium");
}

/** Pi's parent walks never end on a parentId cycle; such leaves are not recorded. */
function hasCycle(sm, leaf) {
    const seen = new Set();
    let entry = leaf == null ? undefined : sm.byId.get(leaf);
    while (entry) {
        if (seen.has(entry)) return true;
        seen.add(entry);
        entry = entry.parentId == null ? undefined : sm.byId.get(entry.parentId);
    }
    return false;
}

async function captureOne(ref, sm, leaf, spec, thinking, settings = {}) {
    if (hasCycle(sm, leaf)) throw new Error("cycle: Pi would never return");
    const model = findModel(ref, spec);
    const ctx = ref.SM.buildSessionContext(sm.getEntries(), leaf, sm.byId);
    const llm = ref.M.convertToLlm(ctx.messages);
    const transcript = ref.T.normalizeContext({ messages: llm });
    const requested = thinking ?? sessionLevel(sm, leaf, ctx, settings.defaultThinkingLevel);
    const level = ref.MODELS.clampThinkingLevel(model, requested);
    const api = ref.apis[model.api];
    let payload;
    const stream = api.streamSimple(model, transcript, {
        apiKey: DUMMY_KEY,
        sessionId: sm.getSessionId(),
        reasoning: level === "off" ? undefined : level,
        transport: "auto",
        // Pi's agent passes the thinkingBudgets setting with every request (agent.createLoopConfig).
        thinkingBudgets: settings.thinkingBudgets,
        onPayload: (body) => {
            payload = JSON.stringify(body);
            throw new Captured("captured");
        },
    });
    const result = await stream.result();
    const record = { leaf, model: spec, thinking: thinking ?? null, level, sessionId: sm.getSessionId() };
    if (payload === undefined) return { ...record, error: String(result.errorMessage ?? "no payload") };
    if (payload.includes(DUMMY_KEY)) throw new Error("the API key reached the payload");
    return { ...record, payload };
}

async function recordCase(ref, name) {
    const file = path.join(GOLDEN, name, "session.jsonl");
    const { dir, sm } = openSession(ref, file);
    try {
        const records = [];
        if (sm) {
            const defaultLeaf = sm.getLeafId() ?? null;
            const others = leavesOf(sm).filter((l) => l !== defaultLeaf).sort().slice(0, 2);
            for (const [leaf, leafArg] of [[defaultLeaf, null], ...others.map((l) => [l, l])]) {
                for (const spec of leafArg === null ? MODELS : MODELS_OTHER_LEAVES) {
                    const jobs = [null, ...(leafArg === null && MODELS_THINKING[spec] ? [MODELS_THINKING[spec]] : [])];
                    for (const thinking of jobs) {
                        let rec;
                        try {
                            rec = await captureOne(ref, sm, leaf, spec, thinking);
                        } catch (e) {
                            rec = { leaf, model: spec, thinking, error: String(e?.message ?? e) };
                        }
                        records.push({ leafArg, ...rec });
                    }
                }
            }
        }
        const out = { piAi: ref.version, case: name, records };
        writeRecording(path.join(GOLDEN, name, "requests"), out);
        return records.length;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

// `<stem>.jsonl`: the recording without its records on the first line, then one record a line, so
// that git stores a re-record as a small delta (scripts/golden_store.py reads it; a leftover gzip
// copy from before that format is removed).
function writeRecording(stem, out) {
    const { records, ...head } = out;
    const lines = [head, ...records].map((value) => JSON.stringify(value) + "\n");
    fs.writeFileSync(`${stem}.jsonl`, lines.join(""));
    fs.rmSync(`${stem}.json.gz`, { force: true });
}

// Settings that change the body (Pi's settings.json): each variant at the default leaf of a few
// cases, for every model, at the session's level and at explicit levels.
export const SETTINGS_VARIANTS = [
    { defaultThinkingLevel: "high" },
    { defaultThinkingLevel: "off" },
    { thinkingBudgets: { minimal: 500, low: 3000, medium: 12000, high: 40000 } },
    { thinkingBudgets: { medium: 0, high: 1000000 } },
    { defaultThinkingLevel: "minimal", thinkingBudgets: { minimal: 4096.5 } },
];
export const SETTINGS_CASES = ["sample-session", "request-wedges", "seed-running-example", "recovery-omission"];
const SETTINGS_LEVELS = [null, "low", "high", "xhigh"];

async function recordSettings(ref, name) {
    const file = path.join(GOLDEN, name, "session.jsonl");
    const { dir, sm } = openSession(ref, file);
    try {
        const records = [];
        const leaf = sm.getLeafId() ?? null;
        for (const settings of SETTINGS_VARIANTS) {
            for (const spec of MODELS) {
                for (const thinking of SETTINGS_LEVELS) {
                    let rec;
                    try {
                        rec = await captureOne(ref, sm, leaf, spec, thinking, settings);
                    } catch (e) {
                        rec = { leaf, model: spec, thinking, error: String(e?.message ?? e) };
                    }
                    records.push({ settings, ...rec });
                }
            }
        }
        const out = { piAi: ref.version, case: name, records };
        writeRecording(path.join(GOLDEN, name, "requests-settings"), out);
        return records.length;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

// The `--check` rule wedges: each case is a session (as text), a model, a level and settings.
async function recordCheckWedges(ref) {
    const folder = path.join(GOLDEN, "request-wedges");
    const { sessions, jobs } = JSON.parse(fs.readFileSync(path.join(folder, "check-cases.json"), "utf8"));
    const records = [];
    for (const c of jobs) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pitools-check-"));
        const file = path.join(dir, "case.jsonl");
        fs.writeFileSync(file, sessions[c.case]);
        const { dir: copyDir, sm } = openSession(ref, file);
        try {
            if (!sm) throw new Error(`Pi does not load the ${c.case} session`);
            const leaf = sm.getLeafId() ?? null;
            let rec;
            try {
                rec = await captureOne(ref, sm, leaf, c.model, c.thinking, c.settings);
            } catch (e) {
                rec = { leaf, model: c.model, thinking: c.thinking, error: String(e?.message ?? e) };
            }
            records.push({ case: c.case, settings: c.settings, ...rec });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
            fs.rmSync(copyDir, { recursive: true, force: true });
        }
    }
    const out = { piAi: ref.version, records };
    writeRecording(path.join(folder, "check-requests"), out);
    return records.length;
}

// `pitools heal` proof: for golden/heal-*/ the wedge (session.jsonl) and its healed forms
// (healed.jsonl: context_edit entries appended; healed-new.jsonl: the -o clone), Pi's default leaf,
// Pi's LLM messages there (convertToLlm of buildSessionContext) and pi-ai's body for the target
// model (target.txt). Output: golden/<case>/heal.jsonl (or <folder>/heal.jsonl for --heal-folder).
async function recordHeal(ref, name, folder = path.join(GOLDEN, name)) {
    const target = fs.readFileSync(path.join(folder, "target.txt"), "utf8").trim();
    const records = [];
    for (const file of ["session.jsonl", "healed.jsonl", "healed-new.jsonl"]) {
        const { dir, sm, openError } = openSession(ref, path.join(folder, file));
        try {
            if (!sm) {
                records.push({ file, error: openError ?? "Pi loads no entries" });
                continue;
            }
            const leaf = sm.getLeafId() ?? null;
            const ctx = ref.SM.buildSessionContext(sm.getEntries(), leaf, sm.byId);
            const llm = JSON.stringify(ref.M.convertToLlm(ctx.messages));
            let rec;
            try {
                rec = await captureOne(ref, sm, leaf, target, null);
            } catch (e) {
                rec = { leaf, model: target, error: String(e?.message ?? e) };
            }
            records.push({ file, llm, ...rec });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    }
    const out = { piAi: ref.version, case: name, records };
    writeRecording(path.join(folder, "heal"), out);
    return records.length;
}

// Pi's summarization calls (compaction history summary, split-turn prefix summary, branch summary):
// Pi's own `compact()` and `generateBranchSummary()` run on the golden session with a `streamFn`
// standing in for the agent's, as Pi passes one: it hands the context and options Pi built
// (normalizeContext({systemPrompt, messages: [user]}), cacheRetention "none", reasoning = the level)
// to the real adapter's `streamSimple`, captures the body through `onPayload`, and answers with a
// canned reply so the compaction goes on to its next call. The agent's own stream function adds
// only transport settings (timeouts, retries, identity headers), which do not change the body.
// The prompt text is stored once per call and replaced by PROMPT_TOKEN in each payload (the
// payload is otherwise byte for byte what pi-ai built): the file stays small and git-friendly.
export const SUMMARY_CASES = ["sample-session", "request-wedges", "seed-running-example", "recovery-omission"];
export const SUMMARY_MODELS = [
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-opus-4-7",
    "openai/gpt-4o",
    "openai/gpt-5",
    "groq/llama-3.3-70b-versatile",
    "groq/openai/gpt-oss-120b",
    "deepseek/deepseek-v4-pro",
    "google/gemini-2.5-pro",
];
const SUMMARY_LEVELS = ["off", "medium", "high"];
// keepRecentTokens values: Pi's default keeps everything recent in small sessions, so smaller
// ones force a cut (and, where a turn is long, a split-turn prefix summary).
const SUMMARY_KEEP = [2000, 300, 1];
export const PROMPT_TOKEN = "\u0000PITOOLS_PROMPT\u0000";

async function summaryCalls(ref, sm, leaf, model, level) {
    const calls = [];
    const streamFn = async (m, context, options) => {
        let payload;
        const stream = ref.apis[m.api].streamSimple(m, context, {
            ...options,
            apiKey: DUMMY_KEY,
            onPayload: (body) => {
                payload = JSON.stringify(body);
                throw new Captured("captured");
            },
        });
        const result = await stream.result();
        const [system, user] = context.messages;
        calls.push({
            systemPrompt: system?.role === "system" ? system.content : null,
            prompt: user?.content?.[0]?.text ?? null,
            options: { reasoning: options.reasoning ?? null, cacheRetention: options.cacheRetention ?? null },
            payload,
            error: payload === undefined ? String(result.errorMessage ?? "no payload") : undefined,
        });
        const reply = {
            role: "assistant",
            content: [{ type: "text", text: "SUMMARY" }],
            api: m.api,
            provider: m.provider,
            model: m.id,
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "stop",
            timestamp: 0,
        };
        return { result: async () => reply };
    };
    const records = [];
    const branch = sm.getBranch(leaf);
    for (const keep of SUMMARY_KEEP) {
        const settings = { ...ref.C.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: keep };
        const prep = ref.C.prepareCompaction(branch, settings);
        if (!prep) continue;
        calls.length = 0;
        try {
            await ref.C.compact(prep, model, DUMMY_KEY, undefined, undefined, undefined, level, streamFn);
        } catch (e) {
            records.push({ source: "compact", keepRecentTokens: keep, error: String(e?.message ?? e) });
            continue;
        }
        const kinds = prep.isSplitTurn && prep.turnPrefixMessages.length > 0
            ? [...(prep.messagesToSummarize.length > 0 ? ["history"] : []), "turnPrefix"]
            : ["history"];
        calls.forEach((c, i) => records.push({ source: "compact", keepRecentTokens: keep, kind: kinds[i], ...c }));
    }
    // A branch summary: navigating from the leaf back to the middle of its branch.
    const target = branch[Math.floor(branch.length / 2)];
    if (target) {
        const { entries } = ref.B.collectEntriesForBranchSummary(sm, leaf, target.id);
        calls.length = 0;
        const out = await ref.B.generateBranchSummary(entries, { model, apiKey: DUMMY_KEY, thinkingLevel: level, streamFn });
        if (out.error) records.push({ source: "branch", target: target.id, error: out.error });
        for (const c of calls) records.push({ source: "branch", target: target.id, kind: "branch", ...c });
    }
    return records;
}

async function recordSummaries(ref) {
    const cases = [];
    let systemPrompt;
    for (const name of SUMMARY_CASES) {
        const { dir, sm } = openSession(ref, path.join(GOLDEN, name, "session.jsonl"));
        try {
            const leaf = sm.getLeafId();
            const prompts = [];
            const records = [];
            for (const spec of SUMMARY_MODELS) {
                const model = findModel(ref, spec);
                for (const requested of SUMMARY_LEVELS) {
                    // The agent's level is already clamped to its model when Pi compacts.
                    const level = ref.MODELS.clampThinkingLevel(model, requested);
                    for (const rec of await summaryCalls(ref, sm, leaf, model, level)) {
                        if (rec.payload !== undefined) {
                            if (rec.payload.includes(DUMMY_KEY)) throw new Error("the API key reached the payload");
                            let at = prompts.indexOf(rec.prompt);
                            if (at === -1) at = prompts.push(rec.prompt) - 1;
                            const escaped = JSON.stringify(rec.prompt).slice(1, -1);
                            const parts = rec.payload.split(escaped);
                            if (parts.length === 2) rec.payload = parts.join(PROMPT_TOKEN);
                            rec.promptIndex = at;
                            delete rec.prompt;
                            // Every summary call has Pi's one system prompt: stored once, at the top.
                            if (systemPrompt !== undefined && rec.systemPrompt !== systemPrompt) throw new Error("two system prompts");
                            systemPrompt = rec.systemPrompt;
                            delete rec.systemPrompt;
                        }
                        records.push({ model: spec, requested, level, ...rec });
                    }
                }
            }
            cases.push({ case: name, leaf, prompts, records });
            process.stderr.write(`recorded ${name}: ${records.length} summary requests\n`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    }
    const out = { piAi: ref.version, promptToken: PROMPT_TOKEN, systemPrompt, cases };
    fs.writeFileSync(path.join(GOLDEN, "summary-requests.json"), `${JSON.stringify(out, null, 1)}\n`);
}

async function main(argv) {
    const ref = await loadReference();
    const at = (flag) => {
        const i = argv.indexOf(flag);
        return i === -1 ? undefined : argv[i + 1];
    };
    if (argv.includes("--session")) {
        const { dir, sm } = openSession(ref, at("--session"));
        try {
            if (!sm) throw new Error("Pi does not load this file");
            const leaf = at("--leaf") ?? sm.getLeafId() ?? null;
            const rec = await captureOne(ref, sm, leaf, at("--model"), at("--thinking"));
            process.stdout.write(`${JSON.stringify(rec)}\n`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
        return;
    }
    if (argv.includes("--check-wedges")) {
        const n = await recordCheckWedges(ref);
        process.stderr.write(`recorded request-wedges check cases: ${n} requests\n`);
        return;
    }
    if (argv.includes("--heal-folder")) {
        // A generated heal case (tests/golden/heal_generated.py): its files live in a temporary folder.
        const folder = at("--heal-folder");
        const n = await recordHeal(ref, path.basename(folder), folder);
        process.stderr.write(`recorded ${folder}: ${n} files\n`);
        return;
    }
    if (argv.includes("--heal")) {
        const cases = fs.readdirSync(GOLDEN).filter((c) => c.startsWith("heal-") && fs.existsSync(path.join(GOLDEN, c, "target.txt")));
        for (const name of cases.sort()) {
            const n = await recordHeal(ref, name);
            process.stderr.write(`recorded ${name}: ${n} files\n`);
        }
        return;
    }
    if (argv.includes("--summaries")) {
        await recordSummaries(ref);
        return;
    }
    if (argv.includes("--settings")) {
        for (const name of SETTINGS_CASES) {
            const n = await recordSettings(ref, name);
            process.stderr.write(`recorded ${name}: ${n} requests with settings\n`);
        }
        return;
    }
    const cases = argv.length
        ? argv
        : fs.readdirSync(GOLDEN).filter((c) => fs.existsSync(path.join(GOLDEN, c, "session.jsonl"))).sort();
    for (const name of cases) {
        const n = await recordCase(ref, name);
        process.stderr.write(`recorded ${name}: ${n} requests\n`);
    }
}

main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`record_requests: ${e?.stack ?? e}\n`);
    process.exit(1);
});
