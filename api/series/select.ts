// Which version answers each variable of a series call, and over which period (docs/contract.md §8.2): for each
// variable the newest candidate (or the pinned version) that holds every asked date at every asked place, read from
// catalog.json's candidates and the versions' index roots, never by scanning. The period defaults to the one every
// asked variable holds.

import { type Candidate, type CatalogPointer, candidatesOf } from "../../format/catalog.js";
import type { Coverage } from "../../format/coverage.js";
import { dateToDayNumber } from "../../format/dates.js";
import { type Window, containsWindow, windowBbox } from "../../format/grid.js";
import { type Dataset, isCandidate } from "../../format/records.js";
import { type Variable, variableOfRecord } from "../../format/variables.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import type { Context } from "../context.js";
import { HttpError } from "../errors.js";
import { isSupportedGrid, isVisible } from "../records.js";
import { type SpanSlice, findHoldingSlices } from "../tiers.js";
import { type Place, type SeriesConfig, countPlaces } from "./call.js";

/** The version that answers one variable, and where its values lie. */
export interface SeriesChoice {
  variable: Variable;
  view: RasterView;
  /** the series spans holding start..end, in order; null when the version's series tier lacks them (read day by day) */
  slices: SpanSlice[];
}

export interface SeriesSelection {
  /** the dates answered: the asked period, cut to what every asked variable publishes when it runs past that */
  start: string;
  end: string;
  /** the period as asked, when the answer holds only its published part (Service-Period, the manifest's `asked`) */
  asked?: { start: string; end: string };
  days: number;
  /** one per asked variable, in the order asked */
  choices: SeriesChoice[];
}

interface Option {
  id: string;
  coverage: Coverage;
  record: Dataset;
}

const cellOf = (p: Place): Window => [p.col, p.row, 1, 1];
/** The windows a call reads: its box, or each place's cell. */
const windowsOf = ({ box, places }: SeriesConfig): Window[] => (box ? [box.window] : places.map(cellOf));

function unavailable(message: string): HttpError {
  return new HttpError({ kind: "coverage_unavailable", message });
}

/** What a variable's candidates hold, for messages: each id with its period, gaps and box. */
function describeOptions(options: Option[]): string {
  const shown = options.slice(0, 5).map(({ id, coverage }) => {
    const gaps = coverage.gaps.length ? `, ${coverage.gaps.length} gap${coverage.gaps.length === 1 ? "" : "s"}` : "";
    return `${id} (${coverage.first}..${coverage.last}${gaps}; box ${windowBbox(coverage.windowAny).join(",")})`;
  });
  return shown.join("; ") + (options.length > shown.length ? `; and ${options.length - shown.length} more` : "");
}

/** A record that may answer `variable`: a visible demo candidate of that variable on the SILO grid. */
function isOptionFor(record: Dataset, variable: Variable): boolean {
  return isVisible(record) && isCandidate(record) && variableOfRecord(record) === variable && isSupportedGrid(record);
}

/** The pinned version of `variable` (its position `i` among the pins), or a 422 saying why it cannot answer. */
async function readPin(ctx: Context, variable: Variable, id: string, i: number): Promise<Option> {
  const record = await ctx.snapshot.findRecord(id);
  if (!record || !isVisible(record)) throw unavailable(`dataset_version[${i}] ${id} is not a published version here; GET /api/v1/datasets lists what is.`);
  if (!isOptionFor(record, variable)) {
    const holds = variableOfRecord(record)?.name ?? Object.keys(record.variables ?? {}).join(", ");
    throw unavailable(
      `dataset_version[${i}] ${id} is not a public demo SILO daily version of ${variable.name}${holds && holds !== variable.name ? ` (it holds ${holds})` : ""}; pin one version per variable, in the order of variables.`,
    );
  }
  ctx.assertAvailable(id);
  const view = await openVersion(ctx.archive, record);
  if (view.kind !== "raster") throw unavailable(`dataset_version[${i}] ${id} holds no raster.`);
  return { id, coverage: view.index.coverage, record };
}

/** Each catalog's options by variable, when its candidates carry their records (every dist since 2026-11-24). */
const optionsOf = new WeakMap<CatalogPointer, Map<Variable, Option[]>>();

/** The versions that may answer `variable`, in choice order: its pin, or its candidates. */
async function listOptions(ctx: Context, config: SeriesConfig, variable: Variable, i: number): Promise<Option[]> {
  if (config.pins) return [await readPin(ctx, variable, config.pins[i], i)];
  const pointer = ctx.snapshot.pointer;
  let known = optionsOf.get(pointer);
  if (!known) optionsOf.set(pointer, (known = new Map()));
  let options = known.get(variable);
  if (!options) {
    const candidates = candidatesOf(pointer, variable.name) as Candidate[];
    options = [];
    for (const c of candidates) if (isOptionFor(c.record, variable)) options.push({ id: c.id, coverage: c.coverage, record: c.record });
    known.set(variable, options);
  }
  if (options.length === 0) {
    throw unavailable(`No public demo version of ${variable.name} (${variable.silo}) is published here; GET /api/v1/datasets lists what is.`);
  }
  return options;
}

/** Whether `coverage` holds every date of start..end (no gap inside it). */
function holdsPeriod(coverage: Coverage, start: string, end: string): boolean {
  return start >= coverage.first && end <= coverage.last && !coverage.gaps.some(([s, e]) => s <= end && e >= start);
}

/** The choice of `option` for these dates and places, or null when it lacks one of them. */
async function tryOption(ctx: Context, variable: Variable, option: Option, start: string, end: string, windows: Window[]): Promise<SeriesChoice | null> {
  const { coverage } = option;
  if (!holdsPeriod(coverage, start, end) || !windows.every((w) => containsWindow(coverage.windowAny, w))) return null;
  // reading a candidate's index is reading that version: a failure there is that version's (docs/contract.md §4.6)
  const view = await openVersion(ctx.archive, option.record);
  if (view.kind !== "raster") return null;
  // the series route reads the series tier, always: its manifest names the spans' source lists (docs/contract.md §8.2)
  const slices = findHoldingSlices(view, windows, start, end);
  return slices ? { variable, view, slices } : null;
}

/** "the place at latitude -21, longitude 140", "all 3 places" or "the box's 16 cells", for messages. */
function describePlaces(config: SeriesConfig): string {
  const { box, places } = config;
  if (box) {
    const cells = countPlaces(config);
    return `every cell of the box ${box.bbox.join(",")} (${cells} cell${cells === 1 ? "" : "s"})`;
  }
  return places.length === 1 ? `the place at latitude ${places[0].lat}, longitude ${places[0].lon}` : `all ${places.length} places`;
}

/**
 * The period when start or end is not given: from the latest first date to the earliest last date of each
 * variable's first option that holds every place on every date it holds (else on some date).
 */
function defaultPeriod(config: SeriesConfig, optionLists: Option[][]): { start: string; end: string } {
  const windows = windowsOf(config);
  const holds = (o: Option, window: "windowAll" | "windowAny") => windows.every((w) => containsWindow(o.coverage[window], w));
  const coverages = optionLists.map((options, i) => {
    const found = options.find((o) => holds(o, "windowAll")) ?? options.find((o) => holds(o, "windowAny"));
    if (!found) throw unavailable(`No ${config.pins ? "pinned" : "published"} version of ${config.variables[i].name} holds ${describePlaces(config)}; published: ${describeOptions(options)}.`);
    return found.coverage;
  });
  const start = config.start ?? coverages.map((c) => c.first).reduce((a, b) => (a > b ? a : b));
  const end = config.end ?? coverages.map((c) => c.last).reduce((a, b) => (a < b ? a : b));
  if (start > end) {
    const periods = config.variables.map((v, i) => `${v.name} ${coverages[i].first}..${coverages[i].last}`).join(", ");
    throw unavailable(`No period is held by every asked variable from start to end (${start}..${end}): ${periods}; give start and end inside what each holds.`);
  }
  return { start, end };
}

/**
 * What is published of every asked variable at the asked cells: from the latest of the variables' first dates to the
 * earliest of their last dates, each variable's dates those of all its versions that hold the cells. Null when a
 * variable has no such version (the choice below says so).
 */
function publishedPeriod(config: SeriesConfig, optionLists: Option[][]): { first: string; last: string } | null {
  const windows = windowsOf(config);
  let first = "";
  let last = "9999-12-31";
  for (const options of optionLists) {
    const holding = options.filter((o) => windows.every((w) => containsWindow(o.coverage.windowAny, w)));
    if (holding.length === 0) return null;
    const own = holding.map((o) => o.coverage.first).reduce((a, b) => (a < b ? a : b));
    const ownLast = holding.map((o) => o.coverage.last).reduce((a, b) => (a > b ? a : b));
    if (own > first) first = own;
    if (ownLast < last) last = ownLast;
  }
  return { first, last };
}

/**
 * The period a call is answered for: the asked one, cut to what is published when it runs past it (docs/contract.md §8.2: "a
 * period past the published end"); a period wholly outside stays as asked, and the choice refuses it with a 422.
 */
function answeredPeriod(config: SeriesConfig, optionLists: Option[][]): { start?: string; end?: string } {
  const published = publishedPeriod(config, optionLists);
  let { start, end } = config;
  if (!published) return { start, end };
  if (start && end && (end < published.first || start > published.last)) return { start, end };
  if (start && start < published.first && (!end || end >= published.first)) start = published.first;
  if (end && end > published.last && (!start || start <= published.last)) end = published.last;
  return { start, end };
}

/**
 * A 422 when the period asked starts before an asked variable's first date (evap_pan 1970, mslp 1957): SILO has no
 * value there, in any version, so the message names the start to ask from instead.
 */
export function checkFirstDates(variables: readonly Variable[], start: string | undefined, end: string | undefined): void {
  const asked = start ?? end;
  const late = variables.filter((v) => asked !== undefined && asked < v.firstDate);
  if (late.length === 0) return;
  const latest = late.map((v) => v.firstDate).sort().pop()!;
  const said = late.map((v) => `${v.name} (${v.silo}) starts on ${v.firstDate}`).join(", ");
  throw unavailable(`${said}: SILO has no value before it; give start=${latest} or later${end !== undefined && end < latest ? `, and an end on or after it` : ""}.`);
}

/** The version and spans of each asked variable, and the period, or a 422 saying what is published instead. */
export async function chooseVersions(ctx: Context, config: SeriesConfig): Promise<SeriesSelection> {
  checkFirstDates(config.variables, config.start, config.end);
  const optionLists = await Promise.all(config.variables.map((v, i) => listOptions(ctx, config, v, i)));
  const cut = answeredPeriod(config, optionLists);
  const { start, end } = cut.start && cut.end ? { start: cut.start, end: cut.end } : defaultPeriod({ ...config, ...cut }, optionLists);
  const windows = windowsOf(config);
  const choices: SeriesChoice[] = [];
  for (const [i, variable] of config.variables.entries()) {
    let chosen: SeriesChoice | null = null;
    for (const option of optionLists[i]) if ((chosen = await tryOption(ctx, variable, option, start, end, windows))) break;
    if (!chosen) {
      throw unavailable(`No ${config.pins ? "pinned" : "published public demo"} version of ${variable.name} holds ${describePlaces(config)} on every date of ${start}..${end}; published: ${describeOptions(optionLists[i])}.`);
    }
    ctx.assertAvailable(chosen.view.record.id); // the chosen version is 503 when it failed: never a silent fallback
    choices.push(chosen);
  }
  const asked = (config.start && config.start !== start) || (config.end && config.end !== end) ? { start: config.start ?? start, end: config.end ?? end } : undefined;
  return { start, end, ...(asked ? { asked } : {}), days: dateToDayNumber(end) - dateToDayNumber(start) + 1, choices };
}
