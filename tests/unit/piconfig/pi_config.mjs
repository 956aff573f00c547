// Ask Pi 1.6.0's own functions (reference dist/config.js, dist/utils/paths.js) about the agent dir
// and path normalisation for each case. Usage: node pi_config.mjs CASES.json  (PI_REF_DIR set)
// Prints {"cases": [{...case, "answer": {...} | "error": "..."}]} on stdout.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const ref = process.env.PI_REF_DIR;
const config = await import(pathToFileURL(join(ref, "dist", "config.js")).href);
const paths = await import(pathToFileURL(join(ref, "dist", "utils", "paths.js")).href);
const cases = JSON.parse(readFileSync(process.argv[2], "utf-8"));

function withEnv(env, fn) {
  const saved = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === null) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return { answer: fn() };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const out = [];
for (const c of cases) {
  let r;
  if (c.kind === "agentDir") {
    r = withEnv(c.env, () => ({
      agentDir: config.getAgentDir(),
      modelsPath: config.getModelsPath(),
      authPath: config.getAuthPath(),
      settingsPath: config.getSettingsPath(),
      sessionsDir: config.getSessionsDir(),
    }));
  } else if (c.kind === "normalizePath") {
    r = withEnv(c.env, () => paths.normalizePath(c.input));
  } else if (c.kind === "resolvePath") {
    r = withEnv(c.env, () => paths.resolvePath(c.input, c.base));
  }
  out.push({ ...c, ...r });
}
process.stdout.write(JSON.stringify({ cases: out }, null, 1) + "\n");
