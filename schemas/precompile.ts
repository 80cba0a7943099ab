// Build step (make install): the validators a server's start runs, compiled by ajv into a module of plain JavaScript
// (ajv's standalone code), so the start runs them without compiling (the catalog pointer's validator took 45 ms of a
// 300 ms start to compile). The module names the schema files it was built from by their sha256: a server takes it
// only when its own files hash the same (server/precompiled.ts), so a module built from other schemas is never used.
//
//   tsx schemas/precompile.ts build/validators.js

import { renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import standaloneCode from "ajv/dist/standalone/index.js";
import { schemaFilesSha256 } from "./fingerprint.js";
import { makeAjv } from "./validate.js";

/** The schemas a start validates: catalog.json, before the server listens (format/archive.ts readPointer). */
export const PRECOMPILED_IDS = ["dist-catalog-pointer.schema.json"];

/** The module's text: `validators` by `$id`, and `schemaFilesSha256`. */
export function precompiledModule(): string {
  const ajv = makeAjv({ source: true, esm: true });
  const names = Object.fromEntries(PRECOMPILED_IDS.map((id, i) => [`v${i}`, id]));
  // ajv's ESM output still calls require() for the formats it uses (ajv-formats' date and uri); a module is strict
  const code = standaloneCode.default(ajv, names).replace(/^"use strict";/, "");
  return [
    'import { createRequire } from "node:module";',
    "const require = createRequire(import.meta.url);",
    code,
    `export const schemaFilesSha256 = ${JSON.stringify(schemaFilesSha256())};`,
    `export const validators = {${PRECOMPILED_IDS.map((id, i) => `${JSON.stringify(id)}: v${i}`).join(", ")}};`,
    "",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) {
  const out = process.argv[2];
  if (!out) throw new Error("usage: tsx schemas/precompile.ts <output.js>");
  writeFileSync(`${out}.part`, precompiledModule());
  renameSync(`${out}.part`, out);
}
