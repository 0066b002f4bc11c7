// IP filter rules: parsing, normalization and matching (IPv4 and IPv6, single addresses and CIDR
// ranges). Pure functions, no I/O. Matching uses node:net BlockList.
//
// Rule shape (ip_filter_rules). Stored form: a JSON array of normalized strings, each an address
// or a CIDR range, e.g. ["203.0.113.0/24", "198.51.100.7", "2001:db8::/32"]. Normalization:
// surrounding space trimmed, IPv6 written canonically (RFC 5952: lower case, longest zero run
// compressed), host bits below the prefix cleared ("203.0.113.9/24" → "203.0.113.0/24"), a full
// prefix (/32, /128) written as the bare address, an IPv4-mapped IPv6 address ("::ffff:1.2.3.4")
// written as IPv4 (a mapped range ::ffff:0:0/96 and longer as the IPv4 range), duplicates dropped (first one kept). Accepted as input: those strings, or
// objects {"value": "<address or CIDR>", "note": "office"} (the shape some UIs send); the note is
// a UI label and is not stored. Zone ids ("fe80::1%eth0") are refused.
//
// Modes: 'whitelist' lets only matching addresses through; 'blacklist' refuses matching ones. An
// empty whitelist lets nobody through; an empty blacklist refuses nobody.
import net from 'node:net';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';

export type IpFilterMode = 'whitelist' | 'blacklist';
export type IpRuleInput = string | { value: string; note?: string | null };

export interface ParsedRule {
  family: 4 | 6;
  /** address bytes with host bits cleared */
  bytes: Uint8Array;
  prefix: number;
}

function parseV4(s: string): Uint8Array | null {
  if (net.isIPv4(s) === false) return null;
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^\d{1,3}$/.test(parts[i])) return null;
    const n = Number(parts[i]);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseV6(s: string): Uint8Array | null {
  if (!net.isIPv6(s) || s.includes('%')) return null;
  let text = s;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // embedded IPv4 (::ffff:1.2.3.4): write it as two hex groups
    const v4 = parseV4(last);
    if (!v4) return null;
    text = `${text.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const left = groups(halves[0]);
  const right = halves.length === 2 ? groups(halves[1]) : [];
  let all: string[];
  if (halves.length === 2) {
    const fill = 8 - left.length - right.length;
    if (fill < 1) return null;
    all = [...left, ...new Array<string>(fill).fill('0'), ...right];
  } else {
    all = left;
  }
  if (all.length !== 8 || all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** An address (no prefix) → family and bytes; IPv4-mapped IPv6 becomes IPv4. null when invalid. */
export function parseAddress(s: string): { family: 4 | 6; bytes: Uint8Array } | null {
  const v4 = parseV4(s);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseV6(s);
  if (!v6) return null;
  if (V4_MAPPED_PREFIX.every((b, i) => v6[i] === b)) return { family: 4, bytes: v6.slice(12) };
  return { family: 6, bytes: v6 };
}

function mask(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < out.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] &= bits === 0 ? 0 : (0xff << (8 - bits)) & 0xff;
  }
  return out;
}

function formatBytes(family: 4 | 6, b: Uint8Array): string {
  if (family === 4) return Array.from(b).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  // The WHATWG URL serializer writes IPv6 hosts in the RFC 5952 canonical form.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** One rule (address or CIDR) → parsed form, or an error message. */
export function parseRule(input: string): ParsedRule | { error: Msg } {
  const s = input.trim();
  if (!s) return { error: msg('field.not_empty') };
  if (s.length > 64) return { error: msg('field.max_chars', { max: 64 }) };
  const slash = s.indexOf('/');
  const addrText = slash === -1 ? s : s.slice(0, slash);
  const prefixText = slash === -1 ? undefined : s.slice(slash + 1);
  // A mapped address with a prefix keeps its IPv6 meaning, so parse the family from the text.
  const a =
    prefixText === undefined
      ? parseAddress(addrText)
      : (() => {
          const v4 = parseV4(addrText);
          if (v4) return { family: 4 as const, bytes: v4 };
          const v6 = parseV6(addrText);
          return v6 ? { family: 6 as const, bytes: v6 } : null;
        })();
  if (!a) return { error: msg('schema.an_ipv4_or_ipv6_address_or') };
  const max = a.family === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return { error: msg('field.cidr_prefix_range', { max }) };
    prefix = Number(prefixText);
  }
  if (a.family === 6 && prefix >= 96 && V4_MAPPED_PREFIX.every((b, i) => a.bytes[i] === b)) {
    // ::ffff:a.b.c.d/120 is an IPv4 range: clients are matched by their IPv4 address
    return { family: 4, bytes: mask(a.bytes.slice(12), prefix - 96), prefix: prefix - 96 };
  }
  return { family: a.family, bytes: mask(a.bytes, prefix), prefix };
}

/** The normalized text of a parsed rule. */
export function formatRule(r: ParsedRule): string {
  const addr = formatBytes(r.family, r.bytes);
  return r.prefix === (r.family === 4 ? 32 : 128) ? addr : `${addr}/${r.prefix}`;
}

function ruleText(r: IpRuleInput): string {
  return typeof r === 'string' ? r : r && typeof r === 'object' && typeof r.value === 'string' ? r.value : '';
}

/**
 * Rules as given (strings or {value, note}) → normalized strings, or per-index errors
 * (keys "0", "1", ... so a schema can report them as ip_filter_rules.N).
 */
export function normalizeIpRules(rules: readonly IpRuleInput[]): { rules: string[] } | { errors: Record<string, Msg> } {
  const out: string[] = [];
  const seen = new Set<string>();
  const errors: Record<string, Msg> = {};
  rules.forEach((r, i) => {
    const p = parseRule(ruleText(r));
    if ('error' in p) {
      errors[String(i)] = p.error;
      return;
    }
    const text = formatRule(p);
    if (!seen.has(text)) {
      seen.add(text);
      out.push(text);
    }
  });
  return Object.keys(errors).length ? { errors } : { rules: out };
}

/** The stored column (JSON text, or an already parsed array) → rule strings; invalid entries are dropped. */
export function parseStoredRules(raw: unknown): string[] {
  let v = raw;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const r of v as IpRuleInput[]) {
    const p = parseRule(ruleText(r));
    if (!('error' in p)) out.push(formatRule(p));
  }
  return out;
}

/** A compiled rule set: build once, test many addresses. */
export class IpMatcher {
  private list = new net.BlockList();
  readonly size: number;
  constructor(rules: readonly IpRuleInput[]) {
    let n = 0;
    for (const r of rules) {
      const p = parseRule(ruleText(r));
      if ('error' in p) continue;
      this.list.addSubnet(formatBytes(p.family, p.bytes), p.prefix, p.family === 4 ? 'ipv4' : 'ipv6');
      n++;
    }
    this.size = n;
  }

  matches(ip: string): boolean {
    if (!this.size) return false;
    const a = parseAddress(ip.trim());
    if (!a) return false;
    return this.list.check(formatBytes(a.family, a.bytes), a.family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Whether `ip` may pass under `mode`. An unparseable address never passes a whitelist. */
  allows(mode: IpFilterMode, ip: string): boolean {
    const hit = this.matches(ip);
    return mode === 'blacklist' ? !hit : hit;
  }
}

/** Whether `ip` may pass the rules under `mode` (see the header for the semantics). */
export function ipAllowed(rules: readonly IpRuleInput[], mode: IpFilterMode, ip: string): boolean {
  return new IpMatcher(rules).allows(mode, ip);
}
