// SHA-256 on Node (node:crypto), for the pipeline, the server and tests; browser code gets it from its Platform.

import { createHash } from "node:crypto";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
