// Calendar dates as YYYY-MM-DD strings: validity (leap years) and inclusive ranges, by day-number arithmetic.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The Gregorian rule, the one place it is written. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function countDaysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
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

// Civil-date arithmetic in integers (H. Hinnant's days_from_civil / civil_from_days, proleptic Gregorian):
// no Date objects, so listing a month of dates costs microseconds and years 0..99 stay themselves.

/** Whole days since 1970-01-01 (UTC) of a valid date. */
export function dateToDayNumber(date: string): number {
  const m = Number(date.slice(5, 7));
  const d = Number(date.slice(8, 10));
  const y = Number(date.slice(0, 4)) - (m <= 2 ? 1 : 0);
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

export function dayNumberToDate(day: number): string {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, "0")}-${pad2(m)}-${pad2(d)}`;
}

/** Every date from first to last, both included, ascending. */
export function listDates(first: string, last: string): string[] {
  const dates: string[] = [];
  const end = dateToDayNumber(last);
  for (let day = dateToDayNumber(first); day <= end; day++) dates.push(dayNumberToDate(day));
  return dates;
}
