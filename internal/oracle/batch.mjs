// Runs many cases through the reference client oracle in one process.
// Usage: node batch.mjs PATH/apply.mjs < cases.json
// cases.json is a JSON array of {"case": CASE, "pipeline": bool, "runagent": bool}, CASE as
// apply.mjs reads it; the output is the JSON array of apply.mjs's outputs.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const oracle = process.argv[2];
const { applyCase } = await import(pathToFileURL(path.resolve(oracle)).href);
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const out = [];
for (const c of cases) {
  out.push(await applyCase(c.case, { pipeline: c.pipeline, runagent: c.runagent }));
}
process.stdout.write(JSON.stringify(out) + "\n");
