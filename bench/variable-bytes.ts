// What each variable of a dist costs on disk: the bytes of the objects its versions reach (make prune's walk: day
// pieces, series pieces and their source lists, index pages and their .br copies), apart from what no one variable
// owns (the catalog tree, publish manifests, the explorer, catalog.json).

import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Dataset } from "../format/records.js";
import { type Variable, variableOfRecord } from "../format/variables.js";
import { readPublished } from "../pipeline/store/catalog.js";
import { reachFrom } from "../pipeline/commands/prune.js";
import { sizeOfTree } from "./tools.js";

export interface VariableBytes {
  variable: Variable;
  /** day pieces (.day) */
  day: number;
  /** series pieces (.ser) */
  series: number;
  /** JSON objects: index pages, series source lists, their .br copies */
  json: number;
  total: number;
}

/** Bytes of a dist by variable, and the rest of it. */
export interface DistBytes {
  byVariable: VariableBytes[];
  other: number;
  total: number;
}

async function sizeOf(dist: string, path: string): Promise<number> {
  return (await stat(join(dist, path)).catch(() => null))?.size ?? 0;
}

/**
 * Bytes by variable of `records`' versions in `dist`; `other` is the rest of the dist (objects two variables reach,
 * which a dist of distinct variables never has, are counted there too).
 */
export async function measureVariableBytes(dist: string, records: Dataset[], variables: readonly Variable[]): Promise<DistBytes> {
  const snapshot = await readPublished(dist);
  if (!snapshot) throw new Error(`${dist} holds no catalog.json`);
  try {
    const reached = new Map<Variable, Set<string>>();
    const owners = new Map<string, number>();
    for (const variable of variables) {
      const paths = await reachFrom(snapshot.archive, records.filter((r) => variableOfRecord(r) === variable));
      reached.set(variable, paths);
      for (const path of paths) owners.set(path, (owners.get(path) ?? 0) + 1);
    }
    const byVariable: VariableBytes[] = [];
    for (const variable of variables) {
      const bytes: VariableBytes = { variable, day: 0, series: 0, json: 0, total: 0 };
      for (const path of reached.get(variable)!) {
        if (owners.get(path) !== 1) continue;
        const size = await sizeOf(dist, path);
        if (path.endsWith(".day")) bytes.day += size;
        else if (path.endsWith(".ser")) bytes.series += size;
        else bytes.json += size;
        bytes.total += size;
      }
      byVariable.push(bytes);
    }
    const total = await sizeOfTree(dist);
    return { byVariable, other: total - byVariable.reduce((n, b) => n + b.total, 0), total };
  } finally {
    await snapshot.archive.storage.close?.();
  }
}
