// Ask Pi 1.6.0's own loaders what they do with each broken configuration file.
// Usage: node pi_broken_files.mjs CASES.json  (PI_REF_DIR set). Prints {"cases": [...]} on stdout.
//
// Each case writes one file ("settings" = <agent>/settings.json, "project" = <project>/.pi/
// settings.json with "trusted" saying whether the project is trusted, "models" = models.json,
// "auth" = auth.json) into fresh folders and loads it the way a Pi session does:
// SettingsManager.create + drainErrors, ModelConfig.load, AuthStorage.create + list. The answer
// says whether Pi threw (the run would stop) or carried on, and what it reported.
//
// settings-manager.js imports http-dispatcher.js, which loads undici, which does not import on
// Node 20: a resolve hook swaps in a stand-in with the two values the settings code uses.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { register } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const stub = `export const DEFAULT_HTTP_IDLE_TIMEOUT_MS = 0; export function parseHttpIdleTimeoutMs(v) { return v; }`;
const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier === "./http-dispatcher.js" && context.parentURL?.endsWith("/core/settings-manager.js")) {
    return { url: "data:text/javascript," + encodeURIComponent(${JSON.stringify(stub)}), shortCircuit: true };
  }
  return next(specifier, context);
}`;
register("data:text/javascript," + encodeURIComponent(hooks));

const ref = process.env.PI_REF_DIR;
const load = (rel) => import(pathToFileURL(join(ref, "dist", ...rel.split("/"))).href);
const { SettingsManager } = await load("core/settings-manager.js");
const { ModelConfig } = await load("core/model-config.js");
const { AuthStorage } = await load("core/auth-storage.js");
const cases = JSON.parse(readFileSync(process.argv[2], "utf-8"));
const NAMES = { settings: "settings.json", models: "models.json", auth: "auth.json" };

const out = [];
for (const c of cases) {
  const agent = mkdtempSync(join(tmpdir(), "pi-broken-"));
  const project = mkdtempSync(join(tmpdir(), "pi-broken-project-"));
  if (c.file === "project") {
    mkdirSync(join(project, ".pi"));
    writeFileSync(join(project, ".pi", "settings.json"), c.text);
  } else {
    writeFileSync(join(agent, NAMES[c.file]), c.text);
  }
  let answer;
  try {
    if (c.file === "settings" || c.file === "project") {
      const manager = SettingsManager.create(project, agent, { projectTrusted: c.trusted ?? true });
      const errors = manager.drainErrors().map((e) => e.error.message);
      answer = { carriesOn: true, reported: errors, defaultModel: manager.getDefaultModel() ?? null };
    } else if (c.file === "models") {
      const config = await ModelConfig.load(join(agent, "models.json"));
      answer = { carriesOn: true, reported: config.getError() ? [config.getError()] : [], providers: config.getProviderIds() };
    } else {
      const storage = AuthStorage.create(join(agent, "auth.json"));
      const list = await storage.list();
      answer = { carriesOn: true, reported: [], providers: list.map((e) => e.providerId) };
    }
  } catch (e) {
    answer = { carriesOn: false, reported: [String(e && e.message ? e.message : e)] };
  }
  // Temporary folder names change from run to run: name them by role.
  answer.reported = answer.reported.map((m) => m.replaceAll(agent, "<agent>").replaceAll(project, "<project>"));
  rmSync(agent, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
  out.push({ ...c, answer });
}
process.stdout.write(JSON.stringify({ cases: out }, null, 1) + "\n");
