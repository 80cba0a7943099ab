// Where a pointer on the explorer's map is: the point under it and the cell that holds that point, by the one place
// rule (format/grid.ts lonLatToCell), so a click answers the cell the series route gives for the same point.

import { gridFractionToLonLat, lonLatToCell } from "../format/grid.js";

/**
 * The cell under a pointer at fractions `x` (from the map's left) and `y` (from its top) of the map, which pictures
 * the whole grid a pixel a cell: on the line between two cells, the one east or north; null off the map.
 */
export function pointerToCell(x: number, y: number): { col: number; row: number } | null {
  const [lon, lat] = gridFractionToLonLat(x, y);
  return lonLatToCell(lon, lat);
}
