// What precompiled validators are held to (schemas/precompile.ts writes it, server/precompiled.ts checks it): the
// sha256 of every schema file's JSON, in order. Node-only, beside the platform-free schemas/validate.ts.

import { createHash } from "node:crypto";
import { CONTRACT_SCHEMAS, DIST_SCHEMAS } from "./validate.js";

export function schemaFilesSha256(): string {
  return createHash("sha256").update(JSON.stringify([...CONTRACT_SCHEMAS, ...DIST_SCHEMAS])).digest("hex");
}
