/**
 * An instant taken from outside as RFC 3339 `date-time` (section 5.6): any number of fractional digits, `Z` or a
 * numeric offset, `T`/`Z` in either case. In a query string an unescaped `+` arrives as a space, so a space where
 * the offset's sign stands is read as `+`. Leap seconds (`:60`) are refused: nothing here is stamped with one.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/

/** What a string that is no RFC 3339 instant is told. */
export const NOT_AN_INSTANT =
  "must be an RFC 3339 timestamp with seconds and a zone, like 2026-11-22T12:00:00Z, 2026-11-22T12:00:00.000Z or 2026-11-22T04:00:00-08:00"

/**
 * The instant, or undefined. Digits beyond the millisecond round up: stored times are whole milliseconds, so a
 * bound rounded up selects exactly what the precise bound would, for `>=` and `<` alike.
 */
export const parseInstant = (s: string): Date | undefined => {
  const m = RFC3339.exec(s)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined
  const daysInMonth = new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate()
  if (day < 1 || day > daysInMonth) return undefined
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const offsetHours = Number(m[10])
    const offsetMins = Number(m[11])
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const fraction = m[7] ?? ""
  const millis = Number(fraction.padEnd(3, "0").slice(0, 3)) + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0)
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 as written.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, millis)
  date.setTime(date.getTime() - offsetMinutes * 60_000)
  return Number.isNaN(date.getTime()) ? undefined : date
}
