// The dist's content-addressed object store: every object a writer of a dist adds, named by its sha256.

import { mkdir, readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { brotliCompressSync, constants } from "node:zlib";
import { sha256Hex } from "../../format/hash.js";
import { CATALOG_FILE, type FileEntry, type ObjectKind, type Ref, objectPath } from "../../format/objects.js";
import { StoreError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";
import { type PublishJournal, isNoSpace, noSpaceError } from "./journal.js";

const PRECOMPRESS_MIN_BYTES = 1024;

/** What a stage means to write: `items` pieces of about the size of those written so far (for a full disk's message). */
interface StagePlan {
  stage: string;
  items: number;
  done: number;
  bytes: number;
}

/**
 * The dist's immutable objects, named by the sha256 of their bytes. Writing an object the dist already holds
 * writes nothing once its bytes are checked; `added` lists what this run wrote, for the publish manifest.
 * An object found newer than the last published catalog.json was left by a publish that failed or was
 * killed, and one a prune found unreachable (it waits for deletion) is about to be used again: both are listed
 * too, so every object a version uses is in some manifest. With a journal, every file and folder is recorded
 * before it is written, and a full disk becomes a StoreError naming the stage.
 */
const BROTLI_QUALITY = 5;

export class ObjectStore {
  readonly added: FileEntry[] = [];
  bytesWritten = 0;
  /** the stage of the publish writing now (day pieces are always "day pieces") */
  stage = "index";
  private plan: StagePlan = { stage: "", items: 0, done: 0, bytes: 0 };
  private lastStage = "";
  /** told when writes of a new stage begin (tests fill a disk up to a stage) */
  onStage: ((stage: string) => void) | null = null;
  private readonly knownDirs = new Set<string>();

  constructor(
    readonly root: string,
    /** mtime (ms) of the catalog.json this publish starts from; 0 for a new dist */
    private readonly publishedAtMs = 0,
    /** files a prune found unreachable: one this publish uses again is listed again */
    private readonly unreachable: ReadonlySet<string> = new Set(),
    /** records what this publish writes, so a failure or a kill can take it back */
    private readonly journal: PublishJournal | null = null,
  ) {}

  /** The stage `stage` means to write `items` files of about the same size (an estimate for a full disk's message). */
  expect(stage: string, items: number): void {
    this.plan = { stage, items, done: 0, bytes: 0 };
  }

  /** Bytes later stages are expected to write (the observation table, while the raster is written). */
  laterBytes = 0;

  /** Bytes the current plan still means to write, at the mean size of what it wrote, and what later stages will. */
  private remaining(): number {
    const { stage, items, done, bytes } = this.plan;
    const later = stage === "day pieces" && this.lastStage !== "observations" ? this.laterBytes : 0;
    return (done === 0 ? 0 : Math.max(0, items - done) * (bytes / done)) + later;
  }

  async put(data: string | Uint8Array, kind: ObjectKind, precompress = kind === "json"): Promise<Ref> {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const ref = { sha256: sha256Hex(bytes), size: bytes.byteLength };
    const path = objectPath(ref.sha256, kind);
    const found = await this.check(path);
    if (found && (found.size !== ref.size || found.sha256 !== ref.sha256)) {
      throw new StoreError(path, "write", "this object's bytes do not match its name: the dist is damaged; run `make verify` and restore it from a mirror");
    }
    const stage = kind === "day" ? "day pieces" : this.stage;
    if (!found) await this.write(path, bytes, stage);
    // A brotli copy beside a JSON object (<path>.br): a static host serves it to clients that accept br (index
    // pages shrink five to ten times); readers never need it, and day pieces are compressed already. Quality 5:
    // measured on a year's index pages, 0.5% more bytes than quality 9 at a twelfth of the time (9 was a third of a
    // revision night's writing).
    if (precompress && ref.size >= PRECOMPRESS_MIN_BYTES && !(await this.check(`${path}.br`))) {
      await this.write(`${path}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } }), stage);
    }
    return ref;
  }

  /**
   * What the dist holds at `path` (null: nothing). A file newer than the catalog.json this publish started from
   * was left by a publish that failed or was killed: it is listed for this publish's manifest.
   */
  private async check(path: string): Promise<Ref | null> {
    const target = join(this.root, path);
    const found = await stat(target).catch(() => null);
    if (!found) return null;
    const ref = { sha256: sha256Hex(await readFile(target)), size: found.size };
    const relisted = found.mtimeMs > this.publishedAtMs || this.unreachable.has(path);
    if (relisted && !this.added.some((f) => f.path === path)) this.added.push({ path, ...ref });
    return ref;
  }

  /** Writes a new object of the dist: journalled first (its folders too), a full disk named by stage and space. */
  private async write(path: string, bytes: Uint8Array, stage: string): Promise<void> {
    await this.guard(path, bytes.byteLength, stage, async () => {
      await this.makeDirs(dirname(path));
      await this.journal?.created(path);
      await writeFileAtomic(join(this.root, path), bytes);
    });
    this.added.push({ path, size: bytes.byteLength, sha256: sha256Hex(bytes) });
    this.bytesWritten += bytes.byteLength;
    if (this.plan.stage === stage) {
      this.plan.done++;
      this.plan.bytes += bytes.byteLength;
    }
  }

  /** Runs a step of writing `path`: the stage announced first, a full disk turned into its StoreError. */
  private async guard(path: string, bytes: number, stage: string, step: () => Promise<void>): Promise<void> {
    if (stage !== this.lastStage) this.onStage?.((this.lastStage = stage));
    try {
      await step();
    } catch (err) {
      if (!isNoSpace(err)) throw err;
      throw await noSpaceError(this.root, path, stage, { written: this.bytesWritten, failing: bytes, remaining: this.remaining() });
    }
  }

  /** catalog.json replaced in one rename, flushed first: the publish's last write (docs/format.md §1). */
  async swapCatalog(text: string): Promise<void> {
    await this.guard(CATALOG_FILE, text.length, "catalog.json", async () => {
      await this.journal?.swapping();
      await writeFileAtomic(join(this.root, CATALOG_FILE), text, true);
    });
  }

  /**
   * A writer-only file of the dist replaced whole (the publish's memory of its sources, docs/format.md §1): no part of
   * any version, never served; journalled as a swap, so a temporary file a kill leaves is removed by the next writer.
   */
  async replaceWriterFile(path: string, text: string): Promise<void> {
    await this.journal?.swapping(path);
    await writeFileAtomic(join(this.root, path), text);
  }

  /** The folders of `dir` that do not exist yet, journalled and made, outermost first. */
  private async makeDirs(dir: string): Promise<void> {
    if (dir === "." || this.knownDirs.has(dir)) return;
    await this.makeDirs(dirname(dir));
    if (!(await stat(join(this.root, dir)).catch(() => null))) {
      await this.journal?.createdDir(dir);
      await mkdir(join(this.root, dir), { recursive: true });
    }
    this.knownDirs.add(dir);
  }

  putJson(value: unknown, precompress = true): Promise<Ref> {
    return this.put(JSON.stringify(value), "json", precompress);
  }
}
