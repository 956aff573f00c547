// Let Pi 1.6.0's own SessionManager write a session that holds every entry type it can append, so the
// session JSON Schema (schemas/session.schema.json) can be checked against what the reference writes,
// not only against files pitools or a generator made.
//
// usage: PI_REF_DIR=.../pi-coding-agent node scripts/record_reference_session.mjs OUT.jsonl
//
// Everything is offline: no model is called; the messages are shaped as Pi's agent loop stores them.
// Ids and times are Pi's own (random ids, the clock), so the file is recorded once and committed as
// golden/reference-written/session.jsonl; `make golden` then records Pi's results for it like any case.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.env.PI_REF_DIR;
const out = process.argv[2];
if (!root || !out) {
    process.stderr.write("usage: PI_REF_DIR=.../pi-coding-agent node scripts/record_reference_session.mjs OUT.jsonl\n");
    process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(root, "dist/core/session-manager.js")).href);

const usage = (input, output, cacheRead = 0) => ({
    input,
    output,
    cacheRead,
    cacheWrite: 0,
    totalTokens: input + output + cacheRead,
    cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 + cacheRead * 3e-7 },
});
const assistant = (content, stopReason = "stop", u = usage(1200, 80)) => ({
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: u,
    stopReason,
    timestamp: Date.now(),
});
const user = (content) => ({ role: "user", content, timestamp: Date.now() });
const toolResult = (toolCallId, toolName, text, isError = false) => ({
    role: "toolResult",
    toolCallId,
    toolName,
    content: [{ type: "text", text }],
    isError,
    timestamp: Date.now(),
});

const dir = mkdtempSync(join(tmpdir(), "pi-ref-session-"));
try {
    const sm = SessionManager.create("/home/dev/src/timekeeper", dir);
    sm.appendModelChange("anthropic", "claude-sonnet-4-5");
    sm.appendThinkingLevelChange("medium");
    const u1 = sm.appendMessage(user("parseDuration returns NaN for \"1h30m\" — fix it and add a test."));
    sm.appendMessage(
        assistant(
            [
                { type: "thinking", thinking: "Read the parser first.", thinkingSignature: "sig-abc123" },
                { type: "text", text: "Let me look at the parser." },
                { type: "toolCall", id: "toolu_01", name: "read", arguments: { path: "src/util/time.ts" } },
            ],
            "toolUse",
        ),
    );
    sm.appendMessage(toolResult("toolu_01", "read", "export function parseDuration(s: string): number {\n  return Number(s);\n}\n"));
    const a2 = sm.appendMessage(
        assistant(
            [
                { type: "toolCall", id: "toolu_02", name: "edit", arguments: { path: "src/util/time.ts", edits: [{ oldText: "return Number(s);", newText: "return parsePairs(s);" }] } },
                { type: "toolCall", id: "toolu_03", name: "bash", arguments: { command: "npm test -- time", timeout: 120 } },
            ],
            "toolUse",
            usage(2400, 160, 1200),
        ),
    );
    sm.appendMessage(toolResult("toolu_02", "edit", "Edited src/util/time.ts"));
    sm.appendMessage(toolResult("toolu_03", "bash", "1 failing: expected 5400000, got NaN", true));
    sm.appendCustomEntry("timekeeper-ext", { step: 1, note: "extension state, never sent to the model" });
    sm.appendCustomMessageEntry("timekeeper-ext", "Reminder from an extension: keep the public API unchanged.", true, { source: "hook" });
    sm.appendMessage({
        role: "bashExecution",
        command: "git status --short",
        output: " M src/util/time.ts\n",
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: Date.now(),
    });
    sm.appendMessage(
        user([
            { type: "text", text: "Here is the failing screenshot." },
            { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" },
        ]),
    );
    const a3 = sm.appendMessage(assistant([{ type: "text", text: "Fixed: pairs like 1h30m are summed. Tests pass." }]));
    sm.appendLabelChange(a3, "tests-green");
    sm.appendSessionInfo("Fix parseDuration for compound units");
    sm.appendUsage("title", "anthropic", "claude-haiku-4-5", usage(300, 12), "session title");
    sm.appendContextEdit(a2, { content: "Edited the parser and ran the tests (condensed by the user)." });
    sm.appendCompaction(
        "## Goal\nFix parseDuration for compound units.\n\n## Progress\n- parser rewritten, tests green",
        u1,
        5400,
        { readFiles: ["src/util/time.ts"], modifiedFiles: ["src/util/time.ts"] },
        false,
        usage(5400, 300),
    );
    sm.appendMessage(user("Should \"1h 30m\" with a space work too?"));
    sm.appendMessage(assistant([{ type: "text", text: "It could; I kept it strict on purpose." }]));
    // Leave this branch with a summary and go back to the first answer, as /tree does.
    sm.branchWithSummary(a3, "The user asked about spaces; the parser stays strict.", { readFiles: [], modifiedFiles: [] }, false, usage(800, 40));
    sm.appendMessage(user("Use the ms package instead."));
    sm.appendMessage(assistant([{ type: "text", text: "ms parses one unit per string, so it would not fix 1h30m." }], "stop"));
    sm.appendModelChange("openai", "gpt-5");
    sm.appendMessage(user("Summarize the change in one line."));
    sm.appendMessage({ ...assistant([{ type: "text", text: "parseDuration sums unit pairs." }]), api: "openai-responses", provider: "openai", model: "gpt-5" });

    const written = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
    if (written.length !== 1) throw new Error(`expected one session file in ${dir}, found ${written.length}`);
    copyFileSync(join(dir, written[0]), resolve(out));
    process.stdout.write(`wrote ${out} (${sm.getEntries().length} entries)\n`);
} finally {
    rmSync(dir, { recursive: true, force: true });
}
