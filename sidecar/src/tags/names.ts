// Tag names: the rules of the API (at most 64 characters; no comma, <, >, double quote, line feed,
// carriage return or tab) and the comma-separated list stored on a peer. Comparison is
// case-insensitive; a peer's list keeps the spelling it was given.
import { fieldIssue } from '../http/messages.js';
import { msg, refOf, type Msg } from '@gatehouse/common/messages/index.js';
import { z } from 'zod';
import { codePoints } from '../http/fields.js';
import { fieldText } from '../http/messages.js';

export const TAG_MAX = 64;
/** At most this many tags on one peer. */
export const TAGS_PER_PEER_MAX = 50;
const FORBIDDEN = /[,<>"\n\r\t]/;

/** Why a name is not a valid tag, or null when it is. */
export function tagNameProblem(name: string): Msg | null {
  if (name.length === 0) return msg('field.not_empty');
  if (codePoints(name) > TAG_MAX) return msg('field.max_chars', { max: TAG_MAX });
  if (FORBIDDEN.test(name)) return msg('tag.field.forbidden_characters');
  if (/^\s|\s$/.test(name)) return msg('tag.field.space_at_end');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return msg('field.no_control_chars');
  return null;
}

const NS = '[^\\s,<>"\\u0000-\\u001f\\u007f]';
const C = '[^,<>"\\u0000-\\u001f\\u007f]';
/** tagNameProblem() as a pattern: 1-64 characters, none of , < > " or control characters, no space at either end. */
export const TAG_PATTERN = `${NS}(?:${C}{0,${TAG_MAX - 2}}${NS})?`;

export const tagName = z
  .string()
  .superRefine((v, ctx) => {
    const p = tagNameProblem(v);
    if (p) ctx.addIssue(fieldIssue(p));
  })
  .meta({ pattern: `^${TAG_PATTERN}$` });

export const tagKey = (name: string) => name.toLowerCase();

/**
 * Strips the spaces around a name (", " separates list entries) and nothing else: a line feed, tab
 * or other control character stays and is refused by tagNameProblem instead of vanishing.
 */
export const trimSpaces = (name: string) => name.replace(/^ +| +$/g, '');

/** A tag name in a body: spaces around it are dropped (", " separates list entries). */
export const tagNameIn = z
  .string()
  .transform(trimSpaces)
  .pipe(tagName)
  .meta({ pattern: `^ *${TAG_PATTERN} *$` });

/** Splits a stored tag list. */
export function splitTags(tags: string | null | undefined): string[] {
  if (!tags) return [];
  return tags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** Joins tags, dropping case-insensitive duplicates (the first spelling wins). */
export function joinTags(tags: string[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of tags) {
    const k = tagKey(t);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(t);
  }
  return out.join(',');
}

/** Removes one name from a list: case-insensitive, whole entries only ("web" leaves "webserver"). */
export function stripTag(tags: string, name: string): string {
  const k = tagKey(name);
  return joinTags(splitTags(tags).filter((t) => tagKey(t) !== k));
}

/** Renames one name in a list (case-insensitive, whole entries only), keeping its place. */
export function renameTag(tags: string, from: string, to: string): string {
  const k = tagKey(from);
  return joinTags(splitTags(tags).map((t) => (tagKey(t) === k ? to : t)));
}

/**
 * The `tags` input of a peer body: a comma-separated string or an array of names. Each entry is
 * stripped of surrounding spaces (only spaces) and validated; the result is the normalized stored form.
 */
export const tagList = z
  .union([
    z
      .string()
      .max(TAGS_PER_PEER_MAX * (TAG_MAX * 2 + 2))
      .regex(
        new RegExp(`^ *(?:${TAG_PATTERN})? *(?:, *(?:${TAG_PATTERN})? *){0,${TAGS_PER_PEER_MAX - 1}}$`, 'u'),
        fieldText('schema.comma_separated_tags', { max: TAGS_PER_PEER_MAX }),
      ),
    z.array(z.string().regex(new RegExp(`^ *(?:${TAG_PATTERN})? *$`, 'u'), fieldText('schema.a_tag_name'))).max(TAGS_PER_PEER_MAX),
  ])
  .transform((v, ctx) => {
    const items = (Array.isArray(v) ? v : v.split(',')).map(trimSpaces).filter((t) => t.length > 0);
    for (const t of items) {
      const p = tagNameProblem(t);
      if (p) {
        ctx.addIssue(fieldIssue(msg('tag.field.invalid_tag', { tag: t.slice(0, 70), reason: refOf(p) })));
        return z.NEVER;
      }
    }
    const joined = joinTags(items);
    if (splitTags(joined).length > TAGS_PER_PEER_MAX) {
      ctx.addIssue({ code: 'custom', message: fieldText('tag.field.too_many', { max: TAGS_PER_PEER_MAX }) });
      return z.NEVER;
    }
    return joined;
  });
