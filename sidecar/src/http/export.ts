// Downloads: rows sent as a CSV or JSON attachment (the activity and access logs' export endpoints).
import type Koa from 'koa';
import { toCsv } from '../util/csv.js';

/** Sends rows as a CSV or JSON attachment named `<name>-<UTC time>.<format>`. */
export function sendExport<T extends object>(
  ctx: Koa.Context,
  name: string,
  format: 'csv' | 'json',
  rows: readonly T[],
  columns: readonly (keyof T & string)[],
): void {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  if (format === 'csv') {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(`${name}-${stamp}.csv`);
    ctx.body = toCsv(rows, columns);
  } else {
    ctx.type = 'application/json; charset=utf-8';
    ctx.attachment(`${name}-${stamp}.json`);
    ctx.body = JSON.stringify(rows, null, 2);
  }
}
