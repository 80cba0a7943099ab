// A version as a DAP2 dataset (docs/contract.md §8.6): its variables (`time`, `lat`, `lon`, `crs`, and the variable
// under its API name as a Grid over time, lat and lon, the Zarr view's cube), their attributes, and a constraint's
// projections resolved against them into what an answer sends.

import { type CfAttributes, COORDINATE_CF_ATTRIBUTES, variableCfAttributes } from "../cf.js";
import { type GridCube, type Hyperslab as CubeSlab } from "../cube.js";
import { GRID } from "../../format/grid.js";
import type { AxisStep } from "../tiers.js";
import { type Hyperslab, type Projection, badConstraint, countSlab } from "./constraint.js";
import type { DapArray, DapAttributes, DapGrid, DapStructure, DapVariable } from "./wire.js";

const AXES = ["time", "lat", "lon"] as const;
type Axis = (typeof AXES)[number];

/** What one sent array holds: an axis (its slab), the grid mapping's scalar, or the variable's values (a cube slab). */
export type Source = { kind: "axis"; axis: Axis; step: AxisStep } | { kind: "crs" } | { kind: "values"; slab: CubeSlab };

/** What an answer sends: its DDS variables, and what each of their arrays holds, in the order sent. */
export interface Answered {
  variables: DapVariable[];
  sources: Source[];
  /** values in all (the bound counts every one) */
  count: number;
}

const sizesOf = (cube: GridCube): Record<Axis, number> => ({ time: cube.days, lat: GRID.height, lon: GRID.width });
const TYPES: Record<Axis, "Int32" | "Float64"> = { time: "Int32", lat: "Float64", lon: "Float64" };

const toStep = (s: Hyperslab): AxisStep => ({ start: s.start, step: s.stride, count: countSlab(s) });
const whole = (size: number): Hyperslab => ({ start: 0, stride: 1, stop: size - 1 });

function axisArray(axis: Axis, count: number): DapArray {
  return { kind: "array", name: axis, type: TYPES[axis], dims: [{ name: axis, size: count }] };
}

function valuesArray(name: string, slabs: Record<Axis, Hyperslab>): DapArray {
  return { kind: "array", name, type: "Float32", dims: AXES.map((a) => ({ name: a, size: countSlab(slabs[a]) })) };
}

/** The dataset's variables, unconstrained: its DDS. */
export function describeDataset(cube: GridCube): DapVariable[] {
  const sizes = sizesOf(cube);
  const all = { time: whole(sizes.time), lat: whole(sizes.lat), lon: whole(sizes.lon) };
  const maps = AXES.map((a) => axisArray(a, sizes[a]));
  const grid: DapGrid = { kind: "grid", name: cube.variable.name, array: valuesArray(cube.variable.name, all), maps };
  return [...maps, { kind: "array", name: "crs", type: "Int32", dims: [] }, grid];
}

/** CF attributes as DAS attributes: numbers are Float64, text String. */
function toDas(attributes: CfAttributes): DapAttributes {
  return Object.entries(attributes).map(([k, v]) => [k, typeof v === "number" ? { type: "Float64", value: v } : v] as const);
}

/** The DAS containers: each variable's CF attributes, and the dataset's own (version, hash, license, dates). */
export function describeAttributes(cube: GridCube): [string, DapAttributes][] {
  const record = cube.view.record;
  const { first, last, gaps } = cube.view.index.coverage;
  const values: DapAttributes = [...toDas(variableCfAttributes(cube.variable)), ["_FillValue", { type: "Float32", value: Number.NaN }]];
  const globals: DapAttributes = [
    ["Conventions", "CF-1.8"],
    ["title", record.title],
    ["source", record.attribution],
    ["license", record.license],
    ["dataset_version", record.id],
    ["content_sha256", record.content_sha256],
    ["time_coverage_start", first],
    ["time_coverage_end", last],
    ["references", `/api/v1/datasets/${record.id}`],
    ["comment", gaps.length > 0 ? `Dates not held (gaps) read as NaN: ${gaps.map(([a, b]) => (a === b ? a : `${a}..${b}`)).join(", ")}.` : "Every date from the first to the last is held."],
  ];
  return [
    ...AXES.map((a) => [a, toDas(COORDINATE_CF_ATTRIBUTES[a])] as [string, DapAttributes]),
    ["crs", toDas(COORDINATE_CF_ATTRIBUTES.crs)],
    [cube.variable.name, values],
    ["NC_GLOBAL", globals],
  ];
}

/** The parts of the grid a constraint asks: its array and each map, with their hyperslabs. */
interface GridAsk {
  array?: Record<Axis, Hyperslab>;
  maps: Partial<Record<Axis, Hyperslab>>;
}

const sameSlab = (a: Hyperslab, b: Hyperslab) => a.start === b.start && a.stride === b.stride && a.stop === b.stop;

/** The hyperslabs of a projection over dims `dims`: all given, or none (the whole); each inside its dimension. */
function checkSlabs(p: Projection, dims: readonly Axis[], sizes: Record<Axis, number>): Hyperslab[] {
  if (p.slabs.length === 0) return dims.map((d) => whole(sizes[d]));
  if (p.slabs.length !== dims.length) {
    const shape = dims.map((d) => `[${d} = ${sizes[d]}]`).join("");
    throw badConstraint(`${p.text} gives ${p.slabs.length} hyperslab${p.slabs.length === 1 ? "" : "s"}; ${p.path.join(".")} has ${dims.length} dimension${dims.length === 1 ? "" : "s"} ${shape}: give one each, or none for all of it.`);
  }
  p.slabs.forEach((s, i) => {
    const size = sizes[dims[i]];
    if (s.stop >= size) throw badConstraint(`${p.text}: index ${s.stop} of ${dims[i]} is past its end; ${dims[i]} has ${size} indices, 0 to ${size - 1}.`);
  });
  return p.slabs;
}

function unknownName(p: Projection, cube: GridCube): never {
  const name = cube.variable.name;
  const alias = p.path.some((n) => n === cube.variable.silo) ? ` (SILO's ${cube.variable.silo} is ${name} here)` : "";
  throw badConstraint(`${p.path.join(".")} is not a variable of this dataset${alias}; its variables are time, lat, lon, crs and the grid ${name}, whose members are ${name}.${name}, ${name}.time, ${name}.lat and ${name}.lon.`);
}

/** Sets a grid part's hyperslab; the same part asked twice must be asked alike. */
function askPart<T extends Hyperslab | Record<Axis, Hyperslab>>(current: T | undefined, next: T, what: string): T {
  const equal = current === undefined || ("start" in current ? sameSlab(current as Hyperslab, next as Hyperslab) : AXES.every((a) => sameSlab((current as Record<Axis, Hyperslab>)[a], (next as Record<Axis, Hyperslab>)[a])));
  if (!equal) throw badConstraint(`${what} is asked twice with different hyperslabs; ask each variable once.`);
  return next;
}

/** The grid's parts in the order sent: a Grid when its array and all its maps agree, else a Structure of what was asked. */
function answerGrid(name: string, ask: GridAsk): { variable: DapGrid | DapStructure; sources: Source[] } {
  const members: DapArray[] = [];
  const sources: Source[] = [];
  if (ask.array) {
    members.push(valuesArray(name, ask.array));
    sources.push({ kind: "values", slab: { time: toStep(ask.array.time), lat: toStep(ask.array.lat), lon: toStep(ask.array.lon) } });
  }
  for (const axis of AXES) {
    const slab = ask.maps[axis];
    if (!slab) continue;
    members.push(axisArray(axis, countSlab(slab)));
    sources.push({ kind: "axis", axis, step: toStep(slab) });
  }
  const array = ask.array;
  const isGrid = array !== undefined && AXES.every((a) => ask.maps[a] && sameSlab(ask.maps[a]!, array[a]));
  return { variable: isGrid ? { kind: "grid", name, array: members[0], maps: members.slice(1) } : { kind: "structure", name, members }, sources };
}

/** What an answer to these projections sends, in the dataset's order (no projection: every variable, whole). */
export function resolveProjections(cube: GridCube, projections: readonly Projection[]): Answered {
  const sizes = sizesOf(cube);
  const name = cube.variable.name;
  const asked = projections.length > 0 ? projections : [...AXES, "crs", name].map((n): Projection => ({ path: [n], slabs: [], text: n }));
  const top: Partial<Record<Axis | "crs", Hyperslab | null>> = {};
  let grid: GridAsk | null = null;
  for (const p of asked) {
    const [head, member] = p.path;
    if (member === undefined && (AXES as readonly string[]).includes(head)) {
      const axis = head as Axis;
      top[axis] = askPart(top[axis] ?? undefined, checkSlabs(p, [axis], sizes)[0], axis);
    } else if (member === undefined && head === "crs") {
      if (p.slabs.length > 0) throw badConstraint(`${p.text}: crs is a scalar (the grid mapping's attributes); ask it without a hyperslab.`);
      top.crs = null;
    } else if (head === name && (member === undefined || member === name)) {
      const [t, la, lo] = checkSlabs(p, AXES, sizes);
      grid ??= { maps: {} };
      grid.array = askPart(grid.array, { time: t, lat: la, lon: lo }, `${name}.${name}`);
      // the whole grid asked: its maps follow its array's hyperslabs
      if (member === undefined) for (const [i, axis] of AXES.entries()) grid.maps[axis] = askPart(grid.maps[axis], [t, la, lo][i], `${name}.${axis}`);
    } else if (head === name && member !== undefined && (AXES as readonly string[]).includes(member)) {
      grid ??= { maps: {} };
      const axis = member as Axis;
      grid.maps[axis] = askPart(grid.maps[axis], checkSlabs(p, [axis], sizes)[0], `${name}.${axis}`);
    } else unknownName(p, cube);
  }
  const variables: DapVariable[] = [];
  const sources: Source[] = [];
  for (const axis of AXES) {
    const slab = top[axis];
    if (!slab) continue;
    variables.push(axisArray(axis, countSlab(slab)));
    sources.push({ kind: "axis", axis, step: toStep(slab) });
  }
  if (top.crs === null) {
    variables.push({ kind: "array", name: "crs", type: "Int32", dims: [] });
    sources.push({ kind: "crs" });
  }
  if (grid) {
    const answered = answerGrid(name, grid);
    variables.push(answered.variable);
    sources.push(...answered.sources);
  }
  const count = sources.reduce((n, s) => n + (s.kind === "crs" ? 1 : s.kind === "axis" ? s.step.count : s.slab.time.count * s.slab.lat.count * s.slab.lon.count), 0);
  return { variables, sources, count };
}
