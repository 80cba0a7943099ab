// Index node summaries (docs/format.md §4): what a month, year or root says of the days below it, made by the
// publish and checked by make verify. Node only: it hashes with node:crypto (browser readers never recompute them).

import { type Coverage, dayCoverage, mergeCoverage } from "./coverage.js";
import { countTiles } from "./grid.js";
import { sha256Hex } from "./hash.js";
import { type DayEntry, type IndexNode, monthContentText, nodesContentText } from "./version-index.js";

/** What an index node says of what is below it: counts, the content hash of its cells, and their coverage. */
export type NodeSummary = Pick<IndexNode, "days" | "tiles" | "content" | "coverage">;

function foldCoverage(items: Coverage[]): Coverage {
  return items.reduce((a, b) => mergeCoverage(a, b));
}

/** A month node's summary, from its days (the writer makes it; make verify checks it). */
export function summarizeDays(days: DayEntry[]): NodeSummary {
  return {
    days: days.length,
    tiles: days.reduce((n, d) => n + countTiles(d.window), 0),
    content: sha256Hex(monthContentText(days)),
    coverage: foldCoverage(days.map((d) => dayCoverage(d.date, d.window))),
  };
}

/** A year node's summary from its months, or the index root's from its years. */
export function summarizeNodes(nodes: IndexNode[]): NodeSummary {
  return {
    days: nodes.reduce((n, m) => n + m.days, 0),
    tiles: nodes.reduce((n, m) => n + m.tiles, 0),
    content: sha256Hex(nodesContentText(nodes)),
    coverage: foldCoverage(nodes.map((m) => m.coverage)),
  };
}

export function isSameSummary(node: NodeSummary, expected: NodeSummary): boolean {
  return node.days === expected.days && node.tiles === expected.tiles && node.content === expected.content && JSON.stringify(node.coverage) === JSON.stringify(expected.coverage);
}
