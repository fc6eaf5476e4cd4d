// Node runs JavaScript: this writes each .ts file of a folder (not the .d.ts) as .js with its types
// stripped, `node transpile.mjs SRC OUT` (tsc --noEmit --strict has checked them; a full tsc emit would
// check them again).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import ts from "typescript";

const [src, out] = process.argv.slice(2);
const compilerOptions = { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 };
mkdirSync(out, { recursive: true });
for (const name of readdirSync(src)) {
  if (name.endsWith(".ts") && !name.endsWith(".d.ts")) {
    const { outputText } = ts.transpileModule(readFileSync(`${src}/${name}`, "utf8"), { compilerOptions });
    writeFileSync(`${out}/${name.slice(0, -3)}.js`, outputText);
  }
}
