// Every fenced code block of the README and docs/*.md, and the one way a test takes a block it runs: docBlock("file",
// "text in it"), with literal arguments, so docs-examples.test.ts finds every claim by reading test/*.ts.

import { readFileSync, readdirSync } from "node:fs";
import { join, resolve, sep } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");

/** A block's language that marks it as no example (an output sample, a table, a diagram): nothing to run. */
export const NOT_AN_EXAMPLE = "text";

export interface DocBlock {
  /** the page, relative to the repository: the README, or docs/clients.md */
  file: string;
  /** the block's position on its page, from 0 */
  index: number;
  /** the fence's info string ("sh", "python", "text"); "" when the fence has none */
  lang: string;
  /** the line of the opening fence, from 1 */
  line: number;
  /** the block's lines, each ending in a newline */
  text: string;
}

/** The README and every page of docs/, in that order. */
export function listDocFiles(): string[] {
  const docs = readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/** The fenced blocks of one page: a fence is three or more backticks at the start of a line, closed by as many. */
export function readBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(REPO, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([^`\s]*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === open[1]);
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    blocks.push({ file, index: blocks.length, lang: open[2], line: i + 1, text: lines.slice(i + 1, end).map((l) => `${l}\n`).join("") });
    i = end;
  }
  return blocks;
}

export function listDocBlocks(): DocBlock[] {
  return listDocFiles().flatMap(readBlocks);
}

/** The blocks of file holding match, as plain text (the claim's rule, so docs-examples.test.ts resolves claims alike). */
export function findBlocks(file: string, match: string): DocBlock[] {
  return readBlocks(file).filter((b) => b.text.includes(match));
}

/**
 * The text of the one block of file (a path: the README's, docs/clients.md) that contains match. Call it with two
 * string literals: docs-examples.test.ts reads every such call in test/ as this file's claim to run that block.
 */
export function docBlock(file: string, match: string): string {
  const found = findBlocks(file, match);
  if (found.length !== 1) throw new Error(`${file}: ${found.length} code blocks contain ${JSON.stringify(match)}, not one`);
  return found[0].text;
}

/**
 * The block with each documented address (or path) replaced by the test's own: every key must occur in the text (with
 * every: false, at least one: a table of a host's folders), so a doc that changes its addresses fails here rather than
 * running against the wrong place.
 */
export function localize(text: string, replacements: Record<string, string>, { every = true } = {}): string {
  let out = text;
  let replaced = 0;
  for (const [from, to] of Object.entries(replacements)) {
    if (out.includes(from)) replaced++;
    else if (every) throw new Error(`the block no longer says ${JSON.stringify(from)}:\n${text}`);
    out = out.replaceAll(from, to);
  }
  if (replaced === 0) throw new Error(`the block says none of ${Object.keys(replacements).join(", ")}:\n${text}`);
  return out;
}

export interface Claim {
  /** the test file making it, relative to the repository */
  by: string;
  file: string;
  match: string;
}

const CALL = /\bdocBlock\(/g;
const LITERAL_CALL = /^docBlock\(\s*("(?:[^"\\\n]|\\.)*")\s*,\s*("(?:[^"\\\n]|\\.)*")\s*\)/;

/** Every docBlock call in test/: the claims, and the calls whose arguments are not two string literals. */
export function readClaims(): { claims: Claim[]; unreadable: string[] } {
  const claims: Claim[] = [];
  const unreadable: string[] = [];
  const files = readdirSync(join(REPO, "test"), { recursive: true, encoding: "utf8" }).map((f) => f.split(sep).join("/"));
  for (const name of files.filter((f) => f.endsWith(".ts") && f !== "docs/doc-blocks.ts" && !f.startsWith("fixtures/")).sort()) {
    const source = readFileSync(join(REPO, "test", name), "utf8");
    for (const call of source.matchAll(CALL)) {
      const literal = LITERAL_CALL.exec(source.slice(call.index));
      if (literal) claims.push({ by: `test/${name}`, file: JSON.parse(literal[1]), match: JSON.parse(literal[2]) });
      else unreadable.push(`test/${name}: ${source.slice(call.index, call.index + 80).split("\n")[0]}`);
    }
  }
  return { claims, unreadable };
}
