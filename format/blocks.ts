// The block lattice of day pieces (docs/format.md §5): 64 x 64 blocks, ordered tile by tile (then row-major
// inside a tile) so a tile is one contiguous byte range; and its inverse, from a cell area to the blocks.

import { type Window, windowToTiles } from "./grid.js";

/** Side of a stored cell block; divides TILE_SIDE, so a tile is whole blocks and one contiguous byte range. */
export const BLOCK_SIDE = 64;

/** A block's index in its day piece and its cells (docs/glossary.md: block part). */
export interface BlockPart {
  /** position in the day piece */
  index: number;
  /** global cells of the block, clipped to the day's window */
  window: Window;
}

/** The blocks of a day window, in piece order: tiles row-major, then blocks row-major inside each tile. */
export function listBlocks(window: Window): BlockPart[] {
  const parts: BlockPart[] = [];
  for (const tile of windowToTiles(window)) {
    const [tc0, tr0, tw, th] = tile.window;
    for (let r = Math.floor(tr0 / BLOCK_SIDE) * BLOCK_SIDE; r < tr0 + th; r += BLOCK_SIDE) {
      for (let c = Math.floor(tc0 / BLOCK_SIDE) * BLOCK_SIDE; c < tc0 + tw; c += BLOCK_SIDE) {
        const c0 = Math.max(c, tc0);
        const r0 = Math.max(r, tr0);
        const c1 = Math.min(c + BLOCK_SIDE, tc0 + tw);
        const r1 = Math.min(r + BLOCK_SIDE, tr0 + th);
        parts.push({ index: parts.length, window: [c0, r0, c1 - c0, r1 - r0] });
      }
    }
  }
  return parts;
}

/** How many 64-cell lattice blocks `area` touches: the reads of one day's cells of it. */
export function countBlocks(area: Window): number {
  const cols = Math.floor((area[0] + area[2] - 1) / BLOCK_SIDE) - Math.floor(area[0] / BLOCK_SIDE) + 1;
  const rows = Math.floor((area[1] + area[3] - 1) / BLOCK_SIDE) - Math.floor(area[1] / BLOCK_SIDE) + 1;
  return cols * rows;
}

/** A day window's blocks with the piece index of each lattice position, so selecting blocks is arithmetic. */
export class BlockOrder {
  readonly parts: BlockPart[];
  private readonly col0: number;
  private readonly row0: number;
  private readonly cols: number;
  private readonly at: Int32Array;

  constructor(window: Window) {
    this.parts = listBlocks(window);
    this.col0 = Math.floor(window[0] / BLOCK_SIDE);
    this.row0 = Math.floor(window[1] / BLOCK_SIDE);
    this.cols = Math.floor((window[0] + window[2] - 1) / BLOCK_SIDE) - this.col0 + 1;
    const rows = Math.floor((window[1] + window[3] - 1) / BLOCK_SIDE) - this.row0 + 1;
    this.at = new Int32Array(this.cols * rows);
    for (const part of this.parts) {
      const bc = Math.floor(part.window[0] / BLOCK_SIDE) - this.col0;
      const br = Math.floor(part.window[1] / BLOCK_SIDE) - this.row0;
      this.at[br * this.cols + bc] = part.index;
    }
  }

  /** Blocks that hold cells of `area` (inside the window), in piece order. */
  select(area: Window): BlockPart[] {
    const out: BlockPart[] = [];
    const r1 = Math.floor((area[1] + area[3] - 1) / BLOCK_SIDE);
    const c1 = Math.floor((area[0] + area[2] - 1) / BLOCK_SIDE);
    for (let br = Math.floor(area[1] / BLOCK_SIDE); br <= r1; br++) {
      for (let bc = Math.floor(area[0] / BLOCK_SIDE); bc <= c1; bc++) out.push(this.parts[this.at[(br - this.row0) * this.cols + (bc - this.col0)]]);
    }
    return out.sort((a, b) => a.index - b.index);
  }
}
