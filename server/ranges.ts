// Single byte ranges (RFC 9110 §14), the one reading of a Range header: the Zarr view's keys are immutable, and
// readers such as GDAL's /vsicurl/ ask for parts of them; the site's pieces are read by range too (the mirror client
// reads blocks so). Several ranges in one request are answered whole (200), as RFC 9110 allows.

/** The one range a header asks, its ends as written (`bytes=a-b`, `bytes=a-`, `bytes=-n`), or null for none or several. */
export function readRangeHeader(header: string | undefined): { first: number | null; last: number | null } | null {
  const m = header ? /^bytes=([0-9]{0,15})-([0-9]{0,15})$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "")) return null;
  return { first: m[1] === "" ? null : Number(m[1]), last: m[2] === "" ? null : Number(m[2]) };
}

/**
 * What a Range header asks of a body of `size` bytes: [first, last] inclusive, "unsatisfiable", or null (answer it
 * whole). Of a body whose size is not known before it is read to its end (`size` null: a stored piece), only a closed
 * range `first-last` is taken, as asked (the caller learns from the read where the body ends); the others answer whole.
 */
export function parseRange(header: string | undefined, size: number | null): [number, number] | "unsatisfiable" | null {
  const asked = readRangeHeader(header);
  if (!asked) return null;
  if (size === null) return asked.first !== null && asked.last !== null && asked.last >= asked.first ? [asked.first, asked.last] : null;
  if (size === 0) return "unsatisfiable";
  const { first, last } = asked;
  if (first === null) return last === 0 ? "unsatisfiable" : [Math.max(0, size - last!), size - 1];
  if (last !== null && last < first) return null; // invalid: the header is ignored (RFC 9110 §14.1.1)
  return first >= size ? "unsatisfiable" : [first, last === null ? size - 1 : Math.min(last, size - 1)];
}
