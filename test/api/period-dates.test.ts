// A period's dates as the series writers put them (api/series/period-dates.ts): views of one calendar, widened when a
// period reaches past it, equal byte for byte to the same dates counted out on their own.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { PeriodDates, periodDates } from "../../api/series/period-dates.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";

const text = (dates: PeriodDates) => Buffer.from(dates.words.buffer, dates.words.byteOffset, dates.words.byteLength).toString("latin1");

/** What a period's dates must be: each date's text (10 bytes and 2 zero bytes), year, month and day of the year. */
function expected(start: string, days: number): { text: string; year: number[]; month: number[]; dayOfYear: number[] } {
  const first = dateToDayNumber(start);
  const dates = Array.from({ length: days }, (_, i) => dayNumberToDate(first + i));
  return {
    text: dates.map((date) => `${date}\0\0`).join(""),
    year: dates.map((date) => Number(date.slice(0, 4))),
    month: dates.map((date) => Number(date.slice(5, 7))),
    dayOfYear: dates.map((date) => dateToDayNumber(date) - dateToDayNumber(`${date.slice(0, 4)}-01-01`) + 1),
  };
}

function assertDates(dates: PeriodDates, start: string, days: number): void {
  const want = expected(start, days);
  assert.is(dates.start, start);
  assert.is(dates.days, days);
  assert.is(text(dates), want.text);
  assert.equal([...dates.year], want.year);
  assert.equal([...dates.month], want.month);
  assert.equal([...dates.dayOfYear], want.dayOfYear);
  assert.is(dates.date(days - 1), dayNumberToDate(dateToDayNumber(start) + days - 1));
}

test("period dates - a year across a leap day and a century that is not leap, as views and counted out", () => {
  for (const [start, days] of [["1999-12-31", 367], ["1900-02-27", 3], ["2004-02-28", 2], ["1889-01-01", 1]] as const) {
    assertDates(periodDates(start, days), start, days);
    assertDates(PeriodDates.count(start, days), start, days);
  }
  assert.is(text(periodDates("1900-02-28", 2)), "1900-02-28\x00\x001900-03-01\x00\x00");
});

test("period dates - periods before 1800 and past 2100 widen the calendar, and the dates within it stay the same", () => {
  assertDates(periodDates("1799-12-30", 4), "1799-12-30", 4);
  assertDates(periodDates("2099-12-30", 5), "2099-12-30", 5);
  assertDates(periodDates("1750-06-01", 100), "1750-06-01", 100);
  assertDates(periodDates("1950-01-01", 25_567), "1950-01-01", 25_567);
});

test.run();
