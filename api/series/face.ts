// The series family's face: what callers outside api/ (the mirror client, the explorer) need of a series call, and
// nothing else of api/series/ (test/house.test.ts holds them to it). Nothing inside api/ imports it.

import type { SERIES_FORMATS } from "./formats/table.js";

export { type Place, type SeriesBox, type SeriesConfig, type SeriesPathSpec, canonicalSeriesRequest, hashSeriesRequest, seriesPath } from "./call.js";

/** A format's name, as `format=` takes it: a row of the table of formats (api/series/formats/table.ts). */
export type SeriesFormat = (typeof SERIES_FORMATS)[number]["name"];
