// Single byte ranges of an answer (RFC 9110 §14): the Zarr view's keys are immutable, and readers such as GDAL's
// /vsicurl/ ask for parts of them. Several ranges in one request are answered whole (200), as RFC 9110 allows.

/** What a Range header asks of a body of `size` bytes: [first, last] inclusive, "unsatisfiable", or null (answer it whole). */
export function parseRange(header: string | undefined, size: number): [number, number] | "unsatisfiable" | null {
  const m = header ? /^bytes=([0-9]{0,15})-([0-9]{0,15})$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (size === 0) return "unsatisfiable";
  if (m[1] === "") {
    const suffix = Number(m[2]);
    return suffix === 0 ? "unsatisfiable" : [Math.max(0, size - suffix), size - 1];
  }
  const first = Number(m[1]);
  const last = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== "" && Number(m[2]) < first) return null; // invalid: the header is ignored (RFC 9110 §14.1.1)
  return first >= size ? "unsatisfiable" : [first, last];
}
