#!/usr/bin/env node
// Pi 1.6.0's context estimate at EVERY entry of a session, as if that entry were the leaf: the
// reference for the viewer's per-entry totals (tests/viewer records it with
// scripts/record_viewer_totals.py). For each entry id: estimateProjectedContextTokens(
// buildSessionProjection(entries, id), getBranch(id)).tokens, or null when Pi throws.
//
//   PI_REF_DIR=... node scripts/pi_entry_totals.mjs SESSION.jsonl   → {"<id>": tokens, ...}
//
// Pi's SessionManager opens a temp copy (it may rewrite a file it migrates); the input is never
// modified. TZ is UTC as in the oracle.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

process.env.TZ = "UTC";
const ref = process.env.PI_REF_DIR;
if (!ref || !fs.existsSync(path.join(ref, "dist", "core", "session-manager.js"))) {
    console.error("pi_entry_totals: set PI_REF_DIR to Pi 1.6.0's package folder");
    process.exit(2);
}
const load = (rel) => import(pathToFileURL(path.join(ref, "dist", "core", rel)).href);
const SM = await load("session-manager.js");
const C = await load("compaction/compaction.js");

const source = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-totals-"));
const copy = path.join(dir, "session.jsonl");
fs.copyFileSync(source, copy);
try {
    const sm = SM.SessionManager.open(copy, dir);
    const entries = sm.getEntries();
    const out = {};
    for (const e of entries) {
        if (typeof e.id !== "string" || e.id in out) continue;
        try {
            const projection = SM.buildSessionProjection(entries, e.id, sm.byId);
            const est = C.estimateProjectedContextTokens(projection, sm.getBranch(e.id));
            out[e.id] = typeof est.tokens === "number" && Number.isFinite(est.tokens) ? est.tokens : null;
        } catch (err) {
            out[e.id] = null;
        }
    }
    process.stdout.write(JSON.stringify(out) + "\n");
} finally {
    fs.rmSync(dir, { recursive: true, force: true });
}
