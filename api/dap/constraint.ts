// A DAP2 constraint expression (OPeNDAP DAP 2.0, §4.9), the projections this server answers: a comma-separated list of
// variables, each a name or `grid.member`, with one hyperslab a dimension (`[i]`, `[start:stop]`, `[start:stride:stop]`,
// inclusive stop), brackets percent-encoded or not. Selections (`&...`) and functions are refused, by name.
//
// Parsing is two steps: the text alone (parseConstraint, before the answer waits for a turn), then against a
// dataset's variables and shapes (resolveProjections), so every message says what was wrong and what is valid.

import { HttpError } from "../errors.js";

/** One dimension's indices: start, stride and inclusive stop, as DAP2 writes them. */
export interface Hyperslab {
  start: number;
  stride: number;
  stop: number;
}

/** One projection as written: a path of one or two names, and the hyperslabs given (none: the whole variable). */
export interface Projection {
  path: string[];
  slabs: Hyperslab[];
  /** the projection's text, for messages */
  text: string;
}

/** A malformed constraint or one this dataset cannot answer: 400, written as a DAP2 error by the route. */
export function badConstraint(message: string): HttpError {
  return new HttpError({ kind: "bad_request", message });
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INDEX = /^(0|[1-9][0-9]{0,9})$/;
/** the longest constraint read: a client asks a few names and hyperslabs */
const MAX_CONSTRAINT_CHARS = 4096;

/** `[a]`, `[a:b]` or `[a:s:b]` as a hyperslab; its text is the bracket's inside. */
function parseHyperslab(inside: string, projection: string): Hyperslab {
  const parts = inside.split(":");
  if (parts.length > 3 || !parts.every((p) => INDEX.test(p))) {
    throw badConstraint(`Hyperslab [${inside}] of ${projection} is not [index], [start:stop] or [start:stride:stop] with whole numbers.`);
  }
  const [a, b, c] = parts.map(Number);
  const slab = parts.length === 1 ? { start: a, stride: 1, stop: a } : parts.length === 2 ? { start: a, stride: 1, stop: b } : { start: a, stride: b, stop: c };
  if (slab.stride < 1) throw badConstraint(`Hyperslab [${inside}] of ${projection} has stride 0; a stride is 1 or more.`);
  if (slab.stop < slab.start) throw badConstraint(`Hyperslab [${inside}] of ${projection} stops (${slab.stop}) before it starts (${slab.start}).`);
  return slab;
}

/** One projection: `name`, `name.member`, each followed by its hyperslabs (only the last name may carry them). */
function parseProjection(text: string): Projection {
  const at = text.indexOf("[");
  const names = at < 0 ? text : text.slice(0, at);
  const slabsText = at < 0 ? "" : text.slice(at);
  if (names.includes("(")) throw badConstraint(`${text} calls a function; this server answers projections only (names with hyperslabs).`);
  const path = names.split(".");
  if (path.length > 2 || !path.every((n) => NAME.test(n))) {
    throw badConstraint(`${JSON.stringify(text)} is not a variable name, nor grid.member, followed by hyperslabs such as [0:9][3][4]; the dataset's .dds lists its names.`);
  }
  const slabs: Hyperslab[] = [];
  const pattern = /\[([^\][]*)\]/gy;
  let m: RegExpExecArray | null;
  while (pattern.lastIndex < slabsText.length && (m = pattern.exec(slabsText))) slabs.push(parseHyperslab(m[1], text));
  if (pattern.lastIndex !== slabsText.length) throw badConstraint(`${JSON.stringify(text)} has text after its name that is not hyperslabs such as [0:9][3][4].`);
  return { path, slabs, text };
}

/** The projections of a query string as sent (percent-encoded or not); none: every variable. */
export function parseConstraint(rawQuery: string): Projection[] {
  let text: string;
  try {
    text = decodeURIComponent(rawQuery);
  } catch {
    throw badConstraint("The constraint is not percent-encoded UTF-8.");
  }
  if (text.length > MAX_CONSTRAINT_CHARS) throw badConstraint(`The constraint is ${text.length} characters; at most ${MAX_CONSTRAINT_CHARS} are read.`);
  const amp = text.indexOf("&");
  if (amp >= 0) {
    throw badConstraint(`The constraint has a selection (${JSON.stringify(text.slice(amp, amp + 60))}); this server answers projections only: give index ranges, such as air_temperature_max[0:30][100:120][200:230] (the time, lat and lon maps give the indices).`);
  }
  if (text.trim() === "") return [];
  return text.split(",").map((p) => parseProjection(p.trim()));
}

/** The number of indices a hyperslab selects. */
export const countSlab = (s: Hyperslab): number => Math.floor((s.stop - s.start) / s.stride) + 1;

/** `[a:s:b]` as DAP2 writes it, `[a:b]` with stride 1. */
export const formatSlab = (s: Hyperslab): string => (s.stride === 1 ? `[${s.start}:${s.stop}]` : `[${s.start}:${s.stride}:${s.stop}]`);
