// Calendar dates as YYYY-MM-DD strings: validity (leap years) and inclusive ranges, by day-number arithmetic.

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function countDaysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Checked by arithmetic, so 2003-02-29 is refused instead of rolling into March. */
export function isCalendarDate(date: string): boolean {
  const m = DATE.exec(date);
  if (!m) return false;
  const month = Number(m[2]);
  const day = Number(m[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= countDaysInMonth(Number(m[1]), month);
}

/** Whole days since 1970-01-01 (UTC) of a valid date. */
export function dateToDayNumber(date: string): number {
  const d = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 onto 1900..1999
  d.setUTCFullYear(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
  return Math.round(d.getTime() / DAY_MS);
}

export function dayNumberToDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Every date from first to last, both included, ascending. */
export function listDates(first: string, last: string): string[] {
  const dates: string[] = [];
  const end = dateToDayNumber(last);
  for (let day = dateToDayNumber(first); day <= end; day++) dates.push(dayNumberToDate(day));
  return dates;
}
