const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?)?$/;

const MS_PER_DAY = 86_400_000;

/**
 * The instant (epoch milliseconds) of an RFC 3339 date (`2024-05-01`) or date-time
 * (`2024-05-01T10:00:00Z`, no offset meaning UTC), or NaN when the string is not one.
 */
export function instantOf(text: string): number {
  // Cheap rejection first: most strings compared in filters are not dates.
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return NaN;
  const match = RFC3339.exec(text);
  if (match === null) return NaN;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
  let instant = daysFromCivil(year, month, day) * MS_PER_DAY;
  if (match[4] === undefined) return instant;
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = match[6] === undefined ? 0 : Number(match[6]);
  if (hour > 23 || minute > 59 || second > 60) return NaN;
  instant += ((hour * 60 + minute) * 60 + second) * 1000;
  if (match[7] !== undefined) instant += Number(match[7]) * 1000;
  if (match[9] !== undefined) {
    const offsetHours = Number(match[10]);
    const offsetMinutes = Number(match[11]);
    if (offsetHours > 23 || offsetMinutes > 59) return NaN;
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    instant += match[9] === '+' ? -offset : offset;
  }
  return instant;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar; avoids Date.UTC's two-digit-year quirk. */
function daysFromCivil(year: number, month: number, day: number): number {
  const shiftedYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(shiftedYear / 400);
  const yearOfEra = shiftedYear - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
