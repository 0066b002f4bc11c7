// Every string the UI shows comes from a dictionary: one file `i18n.ts` per screen folder (and
// src/i18n/common.ts for shared words), each holding the same keys in English and German under a
// namespace: t('peers.title'). Dictionaries use defineDict from './define'. The key test
// (sidecar/ui/test/i18n.test.ts) fails on a key missing
// in either language or a t('...') call whose key no dictionary has.
import { createStore, useStore } from '../store';

import { LANGS, type Dict, type Lang } from './define';

export { defineDict, LANGS, type Dict, type Lang } from './define';
import { wordIn } from './messages';
import type { MessageRef } from '@gatehouse/common/messages/index.js';

const modules = import.meta.glob<Dict>(['./common.ts', '../screens/*/i18n.ts', '../components/i18n.ts'], { eager: true, import: 'default' });
const table: Record<Lang, Map<string, string>> = { en: new Map(), de: new Map() };
for (const d of Object.values(modules)) {
  for (const lang of LANGS) for (const [k, v] of Object.entries(d[lang])) table[lang].set(`${d.ns}.${k}`, v);
}

export const lang = createStore<Lang>(document.documentElement.lang === 'de' ? 'de' : 'en');
lang.subscribe((l) => {
  document.documentElement.lang = l;
});

/** The string for key in the current language, with {name} placeholders filled from vars. */
export function t(key: string, vars?: Record<string, string | number>): string {
  const s = table[lang.get()].get(key) ?? table.en.get(key);
  if (s === undefined) {
    console.error(`i18n: missing key ${key}`);
    return key;
  }
  return vars ? s.replace(/\{(\w+)\}/g, (m, n) => (n in vars ? String(vars[n]) : m)) : s;
}

/** Whether a dictionary has `key` (for names that exist only for some values, e.g. a backup's setting keys). */
export const hasKey = (key: string): boolean => table.en.has(key);

/** A server message ({code, params}) in the current language; `fallback` (the server's English text) for a code this app does not know. */
export function word(ref: MessageRef | null | undefined, fallback = ''): string {
  if (!ref || typeof ref.code !== 'string') return fallback;
  return wordIn(lang.get(), ref, fallback);
}

/** A row that carries its message as code and params beside the English text (activity entries). */
export function wordRow(r: { message: string; code?: string | null; params?: Record<string, unknown> | null }): string {
  return r.code ? word({ code: r.code, params: r.params ?? undefined }, r.message) : r.message;
}

/** The first failed item of a batch's results, worded (its code and parameters; its English `error` for a code this app does not know), as " — why", or "". */
export function firstItemError(results: { ok: boolean; error?: string; code?: string; params?: Record<string, unknown> }[]): string {
  const bad = results.find((r) => !r.ok);
  if (!bad) return '';
  const why = bad.code ? word({ code: bad.code, params: bad.params }, bad.error ?? bad.code) : (bad.error ?? '');
  return why ? ` — ${why}` : '';
}

/** Re-render on language change: call at the top of components that show text. */
export const useLang = () => useStore(lang);

const locale = () => (lang.get() === 'de' ? 'de-DE' : 'en-GB');

export function fmtNumber(n: number, digits = 0): string {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(n);
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
/** 1536 → "1.5 KB" (en) / "1,5 KB" (de); binary steps of 1024. */
export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  let i = 0;
  let v = Math.abs(n);
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${n < 0 ? '-' : ''}${fmtNumber(v, i === 0 ? 0 : v < 10 ? 2 : 1)} ${UNITS[i]}`;
}
export const fmtRate = (bytesPerSecond: number | null | undefined) => `${fmtBytes(bytesPerSecond)}/s`;

function toDate(v: string | number | Date): Date {
  return v instanceof Date ? v : new Date(v);
}
/** Date and time in the user's language, e.g. 24.11.2026, 17:30 / 24 Nov 2026, 17:30. */
export function fmtDate(v: string | number | Date | null | undefined): string {
  if (v === null || v === undefined || v === '') return '–';
  const d = toDate(v);
  if (Number.isNaN(d.getTime())) return '–';
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(d);
}
/** "3 minutes ago" / "vor 3 Minuten". */
export function fmtAgo(v: string | number | Date | null | undefined, now = Date.now()): string {
  if (v === null || v === undefined || v === '' || v === 0) return t('common.never');
  const d = toDate(v).getTime();
  if (Number.isNaN(d)) return '–';
  const s = Math.round((d - now) / 1000);
  const rtf = new Intl.RelativeTimeFormat(locale(), { numeric: 'auto' });
  const a = Math.abs(s);
  if (a < 60) return rtf.format(s, 'second');
  if (a < 3600) return rtf.format(Math.round(s / 60), 'minute');
  if (a < 86400) return rtf.format(Math.round(s / 3600), 'hour');
  return rtf.format(Math.round(s / 86400), 'day');
}
