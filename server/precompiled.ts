// The validators make install compiled at build time (schemas/precompile.ts writes build/validators.js): taken when
// they were built from the schema files this server holds, else ajv compiles on first use as it always can.

import type { ValidateFunction } from "../schemas/validate.js";
import { usePrecompiled } from "../schemas/validate.js";
import { schemaFilesSha256 } from "../schemas/fingerprint.js";

/** The same file from the bundle (build/server.js) and from the sources (server/precompiled.ts). */
const MODULE = new URL("../build/validators.js", import.meta.url);

interface PrecompiledModule {
  schemaFilesSha256: string;
  validators: Record<string, ValidateFunction>;
}

/** Uses build/validators.js when it was built from these schema files: "used", "absent" (not built) or "stale". */
export async function loadPrecompiledValidators(url: URL = MODULE): Promise<"used" | "absent" | "stale"> {
  let module: PrecompiledModule;
  try {
    module = (await import(url.href)) as PrecompiledModule;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return "absent";
    throw err;
  }
  if (module.schemaFilesSha256 !== schemaFilesSha256()) return "stale";
  usePrecompiled(module.validators);
  return "used";
}
