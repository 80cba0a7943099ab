// Where a raster version's files came from, and the labels that says: generated (demo.json beside them),
// fetched from the SILO bucket (silo.lock.json) or supplied by the maintainer (neither) (docs/contract.md §6.2, §5).

import { join } from "node:path";
import type { Dataset, SourceEntry } from "../../format/records.js";
import type { Variable } from "../../format/variables.js";
import { annualDayMemberPath, SILO } from "../../sources/silo.js";
import { DEMO_DESCRIPTION } from "./demo.js";
import { readJsonIfPresent, type SiloFile } from "./discover.js";
import { PublishError } from "../errors.js";

export type Provenance = "generated" | "fetched" | "supplied";

export interface RasterLabels {
  variable: Variable;
  datasetKey: string;
  accessLevel: Dataset["access_level"];
  provenance: Provenance;
  /** the source entry of one day's source, after checking its file against the record it was listed in */
  sourceEntry: (source: RecordedSource) => SourceEntry;
}

/** A day's source as recorded: its file, the file's sha256, and the day's time index inside an annual file. */
export interface RecordedSource {
  file: SiloFile;
  sha256: string;
  index: number | null;
}

/** The member path a day's source entry names: the file, or the day inside an annual file. */
function memberPathOf({ file, index }: RecordedSource): string {
  return index === null ? file.memberPath : annualDayMemberPath(file.memberPath, file.variable, index);
}

interface RecordedFile {
  path: string;
  sha256: string;
  url?: string;
}

function recordedFiles(record: unknown, file: string): Map<string, RecordedFile> {
  const files = (record as { files?: unknown })?.files;
  if (!Array.isArray(files)) throw new PublishError(file, "provenance", "has no files list; delete it or restore it");
  return new Map(files.map((f: RecordedFile) => [f.path, f]));
}

function checkRecorded(recorded: Map<string, RecordedFile>, file: SiloFile, sha256: string, recordName: string): RecordedFile {
  const entry = recorded.get(file.memberPath);
  if (!entry) throw new PublishError(file.memberPath, "provenance", `not listed in ${recordName}; publish a folder holding only files it describes`, file.variable);
  if (entry.sha256 !== sha256) {
    throw new PublishError(file.memberPath, "provenance", `sha256 ${sha256} differs from ${recordName} (${entry.sha256}); the file changed after it was written`, file.variable);
  }
  return entry;
}

export async function labelRaster(
  folder: string,
  variable: Variable,
  options: { datasetKey?: string; accessLevel?: Dataset["access_level"] },
): Promise<RasterLabels> {
  const base = { variable, datasetKey: options.datasetKey ?? variable.datasetKey, accessLevel: options.accessLevel ?? "demo" };
  const demoFile = join(folder, "demo.json");
  const demo = await readJsonIfPresent(demoFile);
  if (demo) {
    const recorded = recordedFiles(demo, demoFile);
    return {
      ...base,
      provenance: "generated",
      sourceEntry: (source) => {
        checkRecorded(recorded, source.file, source.sha256, "demo.json");
        return { sha256: source.sha256, member_path: memberPathOf(source), license: "CC0-1.0", synthetic: true, generator: DEMO_DESCRIPTION.generator };
      },
    };
  }
  const lockFile = join(folder, "silo.lock.json");
  const lock = await readJsonIfPresent(lockFile);
  if (lock) {
    const fetched = recordedFiles(lock, lockFile);
    return {
      ...base,
      provenance: "fetched",
      sourceEntry: (source) => {
        const entry = checkRecorded(fetched, source.file, source.sha256, "silo.lock.json");
        if (!entry.url) throw new PublishError(lockFile, "provenance", `lists ${source.file.memberPath} without the url it was fetched from`);
        return { sha256: source.sha256, url: entry.url, member_path: memberPathOf(source), license: SILO.license };
      },
    };
  }
  // Nothing says where these files came from: record only what is known, never a URL that was not fetched.
  return { ...base, provenance: "supplied", sourceEntry: (source) => ({ sha256: source.sha256, member_path: memberPathOf(source) }) };
}

export interface RasterDescription {
  synthetic: boolean;
  title: string;
  license: string;
  attribution: string;
  metadata: Record<string, unknown>;
}

/** Title, license, attribution and metadata of a version of `variable` whose days came from these kinds of source. */
export function describeRaster(kinds: Provenance[], variable: Variable): RasterDescription {
  const set = [...new Set(kinds)].sort() as Provenance[];
  if (set.includes("generated")) {
    if (set.length > 1) throw new PublishError("sources", "provenance", "generated demo days cannot be mixed with real SILO files in one version");
    return {
      synthetic: true,
      title: `GENERATED DEMO on the SILO grid: ${variable.label} (synthetic values, not observations)`,
      license: "CC0-1.0 (generated demo values, not SILO data; the SILO grid layout is used for format only)",
      attribution:
        "Generated demo data made by this project's pipeline/ingest/demo.ts on the SILO 0.05 degree grid, not observations; " +
        "coastline from Natural Earth (public domain).",
      metadata: { provenance: set, generated: DEMO_DESCRIPTION },
    };
  }
  const supplied = set.includes("supplied");
  const fetched = set.includes("fetched");
  const origin = supplied && fetched ? "fetched from the SILO bucket and supplied by the maintainer" : supplied ? "supplied by the maintainer" : "fetched from the SILO bucket";
  return {
    synthetic: false,
    title: supplied ? `SILO ${variable.label} (files ${origin})` : `SILO ${variable.label}`,
    license: SILO.license,
    attribution: supplied
      ? `${SILO.attribution} Files ${origin}: the pipeline did not fetch ${fetched ? "all of them" : "them"} and cannot vouch for their origin; each source entry carries the sha256 of the file published.`
      : SILO.attribution,
    metadata: { provenance: set, landing_page: SILO.landingPage },
  };
}
