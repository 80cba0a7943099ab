// The APSIM header's tav and amp over whole calendar years (docs/contract.md §8.2), over real HTTP and the mirror
// client, each against a direct computation from the values the sources were made of: the whole years a window holds;
// the place's published record when the window holds none (a year missing a value left out); the record's whole
// months, labelled, when it holds no whole year (the demo's January); the file's days when it holds no whole month.

import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { type Variable, findVariable } from "../../format/variables.js";
import { publishSilently, makeWorkDir, writeSiloDays } from "../support/helpers.js";
import { buildDemoDist, request, withServer } from "../support/server-fixture.js";

const WORK = makeWorkDir("series-met-years");
/** 2 x 2 cells; 2003-12-20 .. 2006-01-10: the whole years 2004 and 2005 and a few days either side. */
const WINDOW: Window = [400, 300, 2, 2];
const DATES = listDates("2003-12-20", "2006-01-10");
/** a cell missing its maximum temperature on one date of 2005 */
const GAPPY = { col: 401, row: 301, date: "2005-06-10" };
/** a record of seven days across a month's end: no whole month */
const SHORT_DATES = listDates("2007-03-28", "2007-04-03");
const MET_VARIABLES = ["radiation", "max_temp", "min_temp", "daily_rain"];

/** A value in tenths (so its float32's shortest decimal is this number): a seasonal cycle for the temperatures. */
function valueOf(silo: string, col: number, row: number, date: string): number {
  const day = dateToDayNumber(date);
  if (silo === "max_temp" && col === GAPPY.col && row === GAPPY.row && date === GAPPY.date) return NaN;
  const season = Math.cos((2 * Math.PI * (day % 365)) / 365);
  const tenths = (x: number) => Math.round(x * 10) / 10;
  if (silo === "max_temp") return tenths(26 + 8 * season + (col - 400) * 0.3 + ((day * 7) % 13) / 10);
  if (silo === "min_temp") return tenths(12 + 6 * season - (row - 300) * 0.2 + ((day * 3) % 17) / 10);
  if (silo === "daily_rain") return ((day * 13) % 50) / 10;
  return 10 + (day % 150) / 10;
}

async function publishDays(name: string, dates: string[]): Promise<string> {
  const sources = join(WORK, `${name}-sources`);
  for (const silo of MET_VARIABLES) await writeSiloDays(sources, dates, WINDOW, (col, row, date) => valueOf(silo, col, row, date), findVariable(silo) as Variable);
  const dist = join(WORK, `${name}-dist`);
  await publishSilently(sources, dist);
  return dist;
}

/** Each date's month and (maxt + mint) / 2, from the values the sources were made of. */
function meansOf(col: number, row: number, dates: string[]): { year: number; month: number; mean: number }[] {
  return dates.map((date) => ({ year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)), mean: (valueOf("max_temp", col, row, date) + valueOf("min_temp", col, row, date)) * 0.5 }));
}

/** Weather.cs's arithmetic over whole years: each month's mean, a year's tav their sum over 12 and amp their range, averaged. */
function directYears(col: number, row: number, years: number[]): { tav: number; amp: number } {
  let [tav, amp] = [0, 0];
  for (const year of years) {
    const days = meansOf(col, row, listDates(`${year}-01-01`, `${year}-12-31`));
    const months = Array.from({ length: 12 }, (_, m) => days.filter((d) => d.month === m + 1));
    const means = months.map((m) => m.reduce((s, d) => s + d.mean, 0) / m.length);
    tav += means.reduce((s, m) => s + m, 0) / 12;
    amp += Math.max(...means) - Math.min(...means);
  }
  return { tav: tav / years.length, amp: amp / years.length };
}

/** The tav_amp program's arithmetic over some days: each calendar month's mean over its days, their mean and range. */
function directPooled(days: { month: number; mean: number }[]): { tav: number; amp: number } {
  const means = [...new Set(days.map((d) => d.month))].sort((a, b) => a - b).map((m) => {
    const of = days.filter((d) => d.month === m);
    return of.reduce((s, d) => s + d.mean, 0) / of.length;
  });
  return { tav: means.reduce((s, m) => s + m, 0) / means.length, amp: Math.max(...means) - Math.min(...means) };
}

const placeOf = (col: number, row: number) => `lat=${(-10 - 0.05 * row).toFixed(2)}&lon=${(112 + 0.05 * col).toFixed(2)}`;
const metPath = (col: number, row: number, period: string) => `/api/v1/series?${placeOf(col, row)}&variables=${MET_VARIABLES.join(",")}&format=met${period}`;

/** The header's tav, amp and the comment line naming their dates. */
function readHeader(text: string): { tav: string; amp: string; basis: string; rows: number } {
  const lines = text.split("\n");
  const value = (name: string) => lines.find((l) => l.startsWith(`${name} = `))!.split(" ")[2];
  const at = lines.indexOf("year day radn maxt mint rain");
  return { tav: value("tav"), amp: value("amp"), basis: lines.find((l) => l.startsWith("!tav and amp: "))!.slice("!tav and amp: ".length), rows: lines.length - at - 3 };
}

const WEATHER_CS = "as APSIM's Weather component computes them (ApsimX Weather.cs: the mean of (maxt + mint) / 2 of each month, a year's tav their sum over 12 and its amp their range, averaged over the years)";

const met = suite("APSIM header over whole years");
let yearsDist: string;
let shortDist: string;
met.before(async () => {
  [yearsDist, shortDist] = await Promise.all([publishDays("years", DATES), publishDays("short", SHORT_DATES)]);
});

met("met years - a window holding whole years: tav and amp over those years alone, equal to a direct computation", async () => {
  await withServer(yearsDist, async (s) => {
    for (const [start, end, years] of [
      ["2003-12-25", "2005-02-03", [2004]],
      ["2003-12-20", "2006-01-10", [2004, 2005]],
      ["2004-01-01", "2004-12-31", [2004]],
    ] as [string, string, number[]][]) {
      const answer = await request(s, metPath(400, 300, `&start=${start}&end=${end}`));
      assert.is(answer.status, 200, answer.text.slice(0, 300));
      const header = readHeader(answer.text);
      const direct = directYears(400, 300, years);
      assert.equal([header.tav, header.amp], [direct.tav.toFixed(2), direct.amp.toFixed(2)], `${start}..${end}`);
      const named = years.length === 1 ? `${years[0]} (1 year)` : `${years[0]} to ${years.at(-1)} (${years.length} years)`;
      assert.is(header.basis, `over the whole calendar years ${named} of this file, ${WEATHER_CS}`);
      assert.is(header.rows, dateToDayNumber(end) - dateToDayNumber(start) + 1);
    }
  });
});

met("met years - a window holding no whole year: the whole years of the place's record, a year missing a value left out", async () => {
  await withServer(yearsDist, async (s) => {
    const cases: [number, number, string, number[]][] = [
      [400, 300, "&start=2005-03-01&end=2005-03-31", [2004, 2005]],
      [400, 301, "&start=2003-12-20&end=2004-12-30", [2004, 2005]],
      // the gappy cell misses maxt on 2005-06-10: 2005 is no whole year of its record
      [GAPPY.col, GAPPY.row, "&start=2004-03-01&end=2004-03-31", [2004]],
    ];
    for (const [col, row, period, years] of cases) {
      const answer = await request(s, metPath(col, row, period));
      assert.is(answer.status, 200, answer.text.slice(0, 300));
      const header = readHeader(answer.text);
      const direct = directYears(col, row, years);
      assert.equal([header.tav, header.amp], [direct.tav.toFixed(2), direct.amp.toFixed(2)], `${col},${row}${period}`);
      const named = years.length === 1 ? `${years[0]} (1 year)` : `${years[0]} to ${years.at(-1)} (${years.length} years)`;
      assert.is(
        header.basis,
        `this file holds no whole calendar year; over the whole calendar years ${named} of the place's published record (the versions of maxt and mint named below, every date held, no value missing), ${WEATHER_CS}`,
      );
    }
    // the window's own arithmetic (a January alone) would say something else entirely
    assert.not.equal(readHeader((await request(s, metPath(400, 300, "&start=2005-01-01&end=2005-01-31"))).text).tav, "2.37");
  });
});

met("met years - the mirror client answers an APSIM file read beyond its window with the server's bytes", async () => {
  const mirror = await startMirrorServer({ dist: yearsDist });
  try {
    await withServer(yearsDist, async (s) => {
      const client = createMirrorClient({ baseUrl: mirror.url });
      for (const path of [metPath(400, 300, "&start=2005-03-01&end=2005-03-31"), metPath(GAPPY.col, GAPPY.row, "&start=2004-03-01&end=2004-03-31")]) {
        const server = await request(s, path);
        const answer = await client.answer({ path });
        assert.is(answer.status, 200);
        assert.ok(Buffer.from(answer.body).equals(server.bytes), path);
      }
    });
  } finally {
    await mirror.close();
  }
});

met("met years - a record with no whole year nor month: over the file's days by the tav_amp program's arithmetic, labelled", async () => {
  await withServer(shortDist, async (s) => {
    const answer = await request(s, metPath(401, 300, ""));
    assert.is(answer.status, 200, answer.text.slice(0, 300));
    const header = readHeader(answer.text);
    const direct = directPooled(meansOf(401, 300, SHORT_DATES));
    assert.equal([header.tav, header.amp], [direct.tav.toFixed(2), direct.amp.toFixed(2)]);
    assert.is(
      header.basis,
      "the place's published record holds no whole calendar year nor a whole month; over the 7 days of this file: tav the mean and amp the range of the mean of (maxt + mint) / 2 of each of 2 calendar months, as APSIM's tav_amp program computes them, so not a whole year's climate",
    );
  });
});

met("met years - the demo's January: no whole year anywhere, so over the record's one whole month, labelled; equal to the CSV's mean", async () => {
  await withServer(await buildDemoDist(), async (s) => {
    const place = "lat=-27.5&lon=151.9";
    const answer = await request(s, `/api/v1/series?${place}&variables=${MET_VARIABLES.join(",")}&format=met&start=2003-01-05&end=2003-01-09`);
    assert.is(answer.status, 200, answer.text.slice(0, 300));
    const header = readHeader(answer.text);
    const csv = (await request(s, `/api/v1/series?${place}&variables=max_temp,min_temp`)).text.trim().split("\n").slice(1);
    assert.is(csv.length, 31);
    const days = csv.map((line) => {
      const [, , , maxt, mint] = line.split(",");
      return { month: 1, mean: (Number(maxt) + Number(mint)) * 0.5 };
    });
    const direct = directPooled(days);
    assert.equal([header.tav, header.amp], [direct.tav.toFixed(2), "0.00"]);
    assert.ok(Number(header.tav) > 15, `January's mean, not a twelfth of it: ${header.tav}`);
    assert.is(
      header.basis,
      "the place's published record holds no whole calendar year; over its 1 whole month (2003-01): tav the mean and amp the range of the mean of (maxt + mint) / 2 of each of 1 calendar month, as APSIM's tav_amp program computes them, so not a whole year's climate",
    );
  });
});

met.run();
