// The shape of the house, checked: no import circle, nothing imports a folder above it, the rooms of pipeline/ and
// api/, one declaration of the grid rule and the version-id pattern, no function over 60 lines, every document a
// comment cites exists in the repository (and the section it names, in it), docs/layout.md lists every file, and no
// identifier uses a word docs/glossary.md retired.

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { suite } from "uvu";
import * as assert from "uvu/assert";

const ROOT = resolve(import.meta.dirname, "..");
/** The project's own code: what the rules hold for (tests and benchmarks aside). */
const FOLDERS = ["format", "schemas", "sources", "api", "pipeline", "server", "client", "explorer"];
/** Which folders each folder may import: the floors of the house, from the ground up. */
const MAY_IMPORT: Record<string, string[]> = {
  schemas: [],
  format: ["schemas"],
  sources: ["format"],
  api: ["format", "schemas"],
  pipeline: ["format", "schemas", "sources"],
  server: ["api", "format", "schemas"],
  client: ["api", "format", "schemas"],
  explorer: ["client", "api", "format"],
};
/**
 * The rooms of pipeline/ and which rooms each may import: its own files at the top (the entry, errors, progress,
 * the worker pool, the downloader) serve every room; files/ is the floor of every folder the pipeline writes (a file
 * written whole, a folder's lock); store/ stands on it and is every writer of a dist's (the object store, the
 * journal, the dist lock, the pending list, the catalog's last steps); ingest/ reads source formats and fetches them
 * into a sources folder (discover, GeoTIFF, NetCDF, SILO values, demo, fetch) on files/ alone; publish/ turns what
 * ingest reads into a version in the store; commands/ are the maintainer's commands beyond the publish (verify, prune,
 * sync, update, upgrade, demo-day), over publish, ingest and both floors. No room imports commands/: the entry alone does.
 */
const PIPELINE_ROOMS: Record<string, string[]> = {
  "pipeline": [],
  "pipeline/files": ["pipeline"],
  "pipeline/store": ["pipeline", "pipeline/files"],
  "pipeline/ingest": ["pipeline", "pipeline/files"],
  "pipeline/publish": ["pipeline", "pipeline/files", "pipeline/store", "pipeline/ingest"],
  "pipeline/commands": ["pipeline", "pipeline/files", "pipeline/store", "pipeline/ingest", "pipeline/publish"],
};
/** pipeline/'s floors, each named for its job: tools skip a folder called dist, and "dist" is what a publish writes. */
const PIPELINE_FLOORS = ["pipeline/files", "pipeline/store"];
/**
 * The one folder of the code still called dist: the dist format's JSON Schemas (schemas/dist/, kept in git since
 * ce86a2d anchored .gitignore's /dist/). Any other is refused.
 */
const DIST_FOLDERS_KEPT = ["schemas/dist"];
/** The pipeline's entry: the one file of the top that may import every room. */
const PIPELINE_ENTRY = "pipeline/cli.ts";
/**
 * The rooms of api/ and which rooms each may import: its own files at the top are the core (service, routes,
 * answer, errors, CORS, parameters, OpenAPI, context, records, cursors, tiers, bytes), which has no request family in
 * it; each family (query/: validate, resolve and query; series/: the series route; zarr/: the Zarr view; listings/:
 * catalog, records, observations, layers, samples, revisions) imports the core, never another family: what two
 * families share lives in the core or in format/.
 */
const API_ROOMS: Record<string, string[]> = {
  "api": [],
  "api/query": ["api"],
  "api/series": ["api", "api/series/formats"],
  "api/series/formats": ["api", "api/series"],
  "api/zarr": ["api"],
  "api/listings": ["api"],
  "api/dap": ["api"],
};
/** The interface's route table: the one file of api/ that imports every room, and that no file of api/ imports. */
const API_ENTRY = "api/interface.ts";
/** Each family's face: the one module of a family that code outside api/ may import (api/<family>/face.ts). */
const API_FACE = "face.ts";
const MAX_FUNCTION_LINES = 60;
/**
 * Identifiers retired when each word got one meaning (docs/glossary.md, issue 24), with the word that replaced
 * them; and no identifier holds "slot" at all (it had four meanings: tile part, block part, a chunk's position,
 * an index).
 */
const RETIRED = new Map<string, string>([
  ["TileSlot", "TilePart"],
  ["BlockSlot", "BlockPart"],
  ["BlockLayout", "BlockOrder"],
  ["ChunkLayout", "ChunkOrder"],
  ["DayLayout", "DaySlice"],
  ["checkLayout", "checkGrid"],
  ["PeriodDay", "NodeDay"],
  ["periodFingerprints", "nodeFingerprints"],
  ["heldRuns", "heldRanges"],
  ["compressRuns", "compressRanges"],
  ["expandRuns", "expandRanges"],
  ["mergeRuns", "mergeRanges"],
  ["coverageRuns", "coverageRanges"],
  ["Runs", "Ranges"],
  ["binaryRuns", "binaryRanges"],
  ["splitRuns", "splitSpans"],
  ["planPeriods", "planSpans"],
  ["readBlockRun", "readAdjacentBlocks"],
]);
const RETIRED_WORD = /slot/i;

function listSources(folder: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...listSources(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const files = FOLDERS.flatMap(listSources);
const parsed = new Map(files.map((f) => [f, ts.createSourceFile(f, readFileSync(join(ROOT, f), "utf8"), ts.ScriptTarget.Latest, true)]));

/** Project files a file imports (relative specifiers, .js resolved to .ts). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  parsed.get(file)!.forEachChild((node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (spec.startsWith(".") && !spec.endsWith(".json")) out.push(relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, ".ts"));
    }
  });
  return out;
}

const house = suite("house");

house("house - every folder imports only the floors below it (pipeline never imports api)", () => {
  const wrong: string[] = [];
  for (const file of files) {
    const folder = file.split("/")[0];
    for (const target of importsOf(file)) {
      const to = target.split("/")[0];
      if (to !== folder && !MAY_IMPORT[folder].includes(to)) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.equal(wrong, []);
});

house("house - pipeline/ rooms import only the rooms below them; the entry alone imports every room", () => {
  const roomOf = (file: string) => dirname(file);
  const wrong: string[] = [];
  for (const file of files.filter((f) => f.startsWith("pipeline/") && f !== PIPELINE_ENTRY)) {
    const room = roomOf(file);
    assert.ok(room in PIPELINE_ROOMS, `${file} is in no room of pipeline/`);
    for (const target of importsOf(file).filter((t) => t.startsWith("pipeline/"))) {
      const to = roomOf(target);
      if (to !== room && !PIPELINE_ROOMS[room].includes(to)) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.equal(wrong, []);
});

/** Every folder below `folder`, itself included. */
function listFolders(folder: string): string[] {
  const inner = readdirSync(join(ROOT, folder), { withFileTypes: true }).filter((e) => e.isDirectory());
  return [folder, ...inner.flatMap((e) => listFolders(join(folder, e.name)))];
}

house("house - no folder of the code, its tests or benchmarks is called dist; pipeline/'s floors are files/ and store/", () => {
  const named = [...FOLDERS, "test", "bench"].flatMap(listFolders).filter((f) => basename(f) === "dist" && !DIST_FOLDERS_KEPT.includes(f));
  assert.equal(named, []);
  assert.equal(PIPELINE_FLOORS.filter((f) => !existsSync(join(ROOT, f)) || !(f in PIPELINE_ROOMS)), [], "pipeline/'s floors");
});

house("house - api/ families import the core, never each other; the core imports no family; only the route table imports every room", () => {
  const wrong: string[] = [];
  for (const file of files.filter((f) => f.startsWith("api/") && f !== API_ENTRY)) {
    const room = dirname(file);
    assert.ok(room in API_ROOMS, `${file} is in no room of api/`);
    for (const target of importsOf(file).filter((t) => t.startsWith("api/"))) {
      const to = dirname(target);
      if (target === API_ENTRY || (to !== room && !API_ROOMS[room].includes(to))) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.equal(wrong, []);
});

house("house - outside api/, code reaches a family only through its face; inside api/, no file imports a face", () => {
  const wrong: string[] = [];
  for (const file of files) {
    for (const target of importsOf(file).filter((t) => t.startsWith("api/"))) {
      const family = dirname(target);
      if (family === "api") continue; // the core and the route table
      const inside = file.startsWith("api/");
      if (inside === (basename(target) === API_FACE)) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.equal(wrong, []);
  const faces = Object.keys(API_ROOMS).filter((room) => existsSync(join(ROOT, room, API_FACE)));
  assert.equal(faces, ["api/query", "api/series"], "the families callers outside api/ use, each with its face");
});

house("house - no import circle", () => {
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") return void circles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
    state.set(file, "open");
    for (const next of importsOf(file)) if (parsed.has(next)) visit(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of files) visit(file, []);
  assert.equal(circles, []);
});

house(`house - no function is over ${MAX_FUNCTION_LINES} lines`, () => {
  const long: string[] = [];
  for (const [file, source] of parsed) {
    const walk = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const name = (node as ts.FunctionDeclaration).name?.getText() ?? "(anonymous)";
        if (last - first + 1 > MAX_FUNCTION_LINES) long.push(`${file}:${first + 1} ${name} ${last - first + 1} lines`);
      }
      node.forEachChild(walk);
    };
    walk(source);
  }
  assert.equal(long, []);
});

house("house - every document a source comment cites is in the repository", () => {
  const missing: string[] = [];
  for (const file of [...files, ...listSources("test"), ...listSources("bench")]) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(/(?:\/\/|\*).*?\b([\w./-]+\.md)\b/g)) {
      const cited = m[1];
      const found = existsSync(join(ROOT, cited)) || existsSync(join(ROOT, "docs", cited));
      if (!found || !cited.includes("/")) missing.push(`${file}: ${cited}`);
    }
  }
  assert.equal([...new Set(missing)], []);
});

/** The headings of a page of the repository ("7. Publishing", "8.2 The series route: ..."), read once. */
const headings = new Map<string, string[]>();
function headingsOf(page: string): string[] {
  if (!headings.has(page)) headings.set(page, [...readFileSync(join(ROOT, page), "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => m[1]));
  return headings.get(page)!;
}

house("house - every section a source comment cites is in its page: docs/format.md §7, operating.md \"What the lock guarantees\"", () => {
  const missing: string[] = [];
  for (const file of [...files, ...listSources("test"), ...listSources("bench")]) {
    // comments as one text: a citation may run over a line break
    const comments = [...readFileSync(join(ROOT, file), "utf8").matchAll(/^\s*(?:\/\/|\/?\*+)(.*)$/gm)].map((m) => m[1].trim()).join(" ");
    for (const m of comments.matchAll(/\b([\w./-]+\.md) ((?:§[\d.]*\d(?:,? (?:and )?)?)+|"[^"]+")/g)) {
      const page = [m[1], join("docs", m[1])].find((p) => existsSync(join(ROOT, p)));
      if (!page) continue; // the page itself: the test above
      const sections = m[2].startsWith('"') ? [m[2].slice(1, -1)] : [...m[2].matchAll(/§([\d.]*\d)/g)].map((s) => s[1]);
      for (const section of sections) {
        const found = /^[\d.]+$/.test(section)
          ? headingsOf(page).some((h) => h.startsWith(`${section}. `) || h.startsWith(`${section} `))
          : headingsOf(page).some((h) => h.toLowerCase().includes(section.toLowerCase()));
        if (!found) missing.push(`${file}: ${page} ${/^[\d.]+$/.test(section) ? "§" : ""}${section}`);
      }
    }
  }
  assert.equal([...new Set(missing)], []);
});

/** Files of the project a contributor writes (git's list, so build output and caches never count). */
function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" });
  return out.split("\n").filter((f) => f !== "" && !f.startsWith("docs/") && !/^test\/fixtures\/.*\.(tif|nc|json|csv)$/.test(f) && !f.startsWith("test/fixtures/dist-3/"));
}

house("house - docs/layout.md lists every file of the repository, and only files that exist", () => {
  const layout = readFileSync(join(ROOT, "docs/layout.md"), "utf8");
  const listed = new Set([...layout.matchAll(/^\| `([^`]+)`(?:, `([^`]+)`)? \|/gm)].flatMap((m) => (m[2] ? [m[1], m[2]] : [m[1]])));
  const tracked = trackedFiles();
  assert.equal(tracked.filter((f) => !listed.has(f)), [], "files missing from docs/layout.md");
  assert.equal([...listed].filter((f) => !existsSync(join(ROOT, f))), [], "docs/layout.md lists files that are gone");
});

/** Every identifier of a parsed file, with its line. */
function identifiersOf(source: ts.SourceFile): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const walk = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) out.push({ name: node.text.replace(/^#/, ""), line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    node.forEachChild(walk);
  };
  walk(source);
  return out;
}

/** The project's code, its tests and its benchmarks, parsed: the words hold everywhere. */
const everyFile = new Map([...parsed, ...[...listSources("test"), ...listSources("bench")].map((f) => [f, ts.createSourceFile(f, readFileSync(join(ROOT, f), "utf8"), ts.ScriptTarget.Latest, true)] as const)]);

house("house - no identifier uses a retired word (docs/glossary.md): no slot, no TileSlot, BlockLayout, PeriodDay, heldRuns, ...", () => {
  const found: string[] = [];
  for (const [file, source] of everyFile) {
    for (const { name, line } of identifiersOf(source)) {
      if (RETIRED.has(name)) found.push(`${file}:${line} ${name} (now ${RETIRED.get(name)})`);
      else if (RETIRED_WORD.test(name)) found.push(`${file}:${line} ${name} (slot: see docs/glossary.md)`);
    }
  }
  assert.equal([...new Set(found)], []);
});

/** The one place rule (docs/contract.md §8.2): a longitude and latitude to the cell that holds them, in format/grid.ts. */
const PLACE_RULE = { file: "format/grid.ts", name: "lonLatToCell" };
/** Names of a function from a point to a cell (pointToCell, lonLatToPlaceCell, placeToCell, ...): each must be the rule or call it. */
const POINT_TO_CELL = /^(point|lonlat|latlon|place|coord\w*)\w*to\w*cell$/i;
/** The folders that read a dist: their grid arithmetic is format/grid.ts's (the pipeline snaps source origins, another rule). */
const READERS = ["api", "client", "explorer", "server"];

house("house - the grid rule is declared once: format/grid.ts lonLatToCell maps a point to a cell, no reader does grid arithmetic of its own", () => {
  const rules: string[] = [];
  const arithmetic: string[] = [];
  for (const [file, source] of parsed) {
    const walk = (node: ts.Node) => {
      const named = (ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node) || ts.isMethodDeclaration(node)) && node.name && ts.isIdentifier(node.name) ? node.name.text : "";
      // a function from a point to a cell is the rule, or asks the rule (the explorer's pointer does)
      const body = ts.isVariableDeclaration(node) ? node.initializer : (node as ts.FunctionLikeDeclaration).body;
      if (POINT_TO_CELL.test(named) && !body?.getText(source).includes(`${PLACE_RULE.name}(`)) rules.push(`${file}: ${named}`);
      node.forEachChild(walk);
    };
    walk(source);
    if (READERS.includes(file.split("/")[0]) && /GRID\.(westEdgeMilliDeg|northEdgeMilliDeg|cellMilliDeg)/.test(source.text)) arithmetic.push(file);
  }
  assert.equal(rules, [`${PLACE_RULE.file}: ${PLACE_RULE.name}`]);
  assert.equal(arithmetic, [], "grid arithmetic outside format/grid.ts");
});

house("house - the leap-year rule is written once (format/dates.ts isLeapYear); every other calendar asks it", () => {
  const found = files.filter((file) => /%\s*400\b/.test(parsed.get(file)!.text));
  assert.equal(found, ["format/dates.ts"]);
});

house("house - the transport's limits are declared once (server/settings.ts ServeLimits); admission takes its fields from it", () => {
  // a field only the limits have: any other interface or object type declaring it is a second declaration
  const declared: string[] = [];
  for (const [file, source] of parsed) {
    const walk = (node: ts.Node) => {
      if ((ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) && node.members.some((m) => m.name?.getText(source) === "queuePerClient")) {
        declared.push(`${file}: ${ts.isInterfaceDeclaration(node) ? node.name.text : "(type literal)"}`);
      }
      node.forEachChild(walk);
    };
    walk(source);
  }
  assert.equal(declared, ["server/settings.ts: ServeLimits"]);
});

/** The version id's pattern (its characters and length), declared once: common.schema.json's `version-id`. */
const VERSION_ID = { file: "schemas/common.schema.json", text: "a-zA-Z0-9_-]{1,128}" };

/** Every file of the project's code and schemas, JSON included (a pattern may be written out in either). */
function listCodeAndSchemas(folder: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...listCodeAndSchemas(path));
    else if (/\.(ts|json)$/.test(entry.name)) out.push(path);
  }
  return out;
}

house("house - the version-id pattern is declared once (common.schema.json's version-id); code derives its RegExp from it", () => {
  const found = FOLDERS.flatMap(listCodeAndSchemas).flatMap((file) => readFileSync(join(ROOT, file), "utf8").split(VERSION_ID.text).slice(1).map(() => file));
  assert.equal(found, [VERSION_ID.file]);
});

house("house - nothing is imported under the name of another export (one name, one thing)", () => {
  const exported = new Map<string, string>();
  for (const [file, source] of parsed) {
    for (const statement of source.statements) {
      const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
      const name = (statement as ts.DeclarationStatement).name;
      if (modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) && name && ts.isIdentifier(name)) exported.set(name.text, file);
    }
  }
  const wrong: string[] = [];
  for (const [file, source] of everyFile) {
    source.forEachChild((node) => {
      if (!ts.isImportDeclaration(node) || !node.importClause?.namedBindings || !ts.isNamedImports(node.importClause.namedBindings)) return;
      for (const element of node.importClause.namedBindings.elements) {
        const alias = element.name.text;
        if (element.propertyName && exported.has(alias)) wrong.push(`${file}: imports ${element.propertyName.text} as ${alias}, the name of ${exported.get(alias)}'s ${alias}`);
      }
    });
  }
  assert.equal(wrong, []);
});

house.run();
