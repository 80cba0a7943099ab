// Labels of a raster version from what lies beside its sources: demo.json (generated) or silo.lock.json (fetched).

import { join } from "node:path";
import type { Dataset, SourceEntry } from "../schemas/dist.js";
import { dateToUrl, SILO_TMAX } from "../sources/silo.js";
import { DEMO_DESCRIPTION } from "./demo.js";
import { readJsonIfPresent, type SiloFile } from "./discover.js";
import { PublishError } from "./errors.js";
import type { RasterLabels } from "./raster.js";

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
  if (!entry) throw new PublishError(file.memberPath, "provenance", `not listed in ${recordName}; publish a folder holding only files it describes`);
  if (entry.sha256 !== sha256) {
    throw new PublishError(file.memberPath, "provenance", `sha256 ${sha256} differs from ${recordName} (${entry.sha256}); the file changed after it was written`);
  }
  return entry;
}

export async function labelRaster(
  folder: string,
  options: { datasetKey?: string; accessLevel?: Dataset["access_level"] },
): Promise<RasterLabels> {
  const datasetKey = options.datasetKey ?? SILO_TMAX.datasetKey;
  const accessLevel = options.accessLevel ?? "demo";
  const demoFile = join(folder, "demo.json");
  const demo = await readJsonIfPresent(demoFile);
  if (demo) {
    const recorded = recordedFiles(demo, demoFile);
    return {
      datasetKey,
      accessLevel,
      synthetic: true,
      title: "GENERATED DEMO on the SILO grid: daily maximum temperature (synthetic values, not observations)",
      license: "CC0-1.0 (generated demo values, not SILO data; the SILO grid layout is used for format only)",
      attribution:
        "Generated demo data made by this project's pipeline/demo.ts on the SILO 0.05 degree grid, not observations; " +
        "coastline from Natural Earth (public domain).",
      metadata: { generated: DEMO_DESCRIPTION },
      sourceEntry: (file, sha256): SourceEntry => {
        checkRecorded(recorded, file, sha256, "demo.json");
        return { sha256, member_path: file.memberPath, license: "CC0-1.0", synthetic: true, generator: DEMO_DESCRIPTION.generator };
      },
    };
  }
  const lockFile = join(folder, "silo.lock.json");
  const lock = await readJsonIfPresent(lockFile);
  const fetched = lock ? recordedFiles(lock, lockFile) : null;
  return {
    datasetKey,
    accessLevel,
    synthetic: false,
    title: "SILO daily maximum temperature",
    license: SILO_TMAX.license,
    attribution: SILO_TMAX.attribution,
    metadata: { landing_page: SILO_TMAX.landingPage },
    sourceEntry: (file, sha256): SourceEntry => {
      const url = fetched ? checkRecorded(fetched, file, sha256, "silo.lock.json").url : undefined;
      return { sha256, url: url ?? dateToUrl(file.date), member_path: file.memberPath, license: SILO_TMAX.license };
    },
  };
}
