#!/usr/bin/env node
// Runs Pi 1.6.0's own SessionManager.createBranchedSession (what /clone and /fork end in) on a
// session and prints the file Pi writes, as JSON lines on stdout: the reference for
// `pitools clone` (tests/golden/test_clone_labels.py).
//
//   PI_REF_DIR=.../pi-coding-agent node scripts/pi_clone.mjs SESSION [LEAF]
//
// LEAF defaults to the session's default leaf (the last entry), as /clone uses it. Pi writes the
// new file into a temporary session directory, removed afterwards; the input is never modified.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [source, leafArg] = process.argv.slice(2);
const piRoot = process.env.PI_REF_DIR;
if (!source || !piRoot) {
    console.error("usage: PI_REF_DIR=<pi-coding-agent@1.6.0> node scripts/pi_clone.mjs SESSION [LEAF]");
    process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(path.join(piRoot, "dist", "core", "session-manager.js")).href);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-clone-"));
try {
    const copy = path.join(dir, "source.jsonl");
    fs.copyFileSync(source, copy);
    const sm = SessionManager.open(copy, dir);
    const written = sm.createBranchedSession(leafArg ?? sm.getLeafId());
    process.stdout.write(fs.readFileSync(written, "utf8"));
} finally {
    fs.rmSync(dir, { recursive: true, force: true });
}
