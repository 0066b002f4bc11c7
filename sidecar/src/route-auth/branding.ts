// Branding images of the login page (logo, background): type checked by content (magic bytes),
// size-limited, stored under <dataDir>/branding/ with a random file name per version.
//
// Accepted: PNG, JPEG, GIF, WebP, at most BRANDING_MAX_BYTES (2 MiB). SVG is refused, whatever its
// name or declared type: an SVG is a document that can carry script and external references.
// A URL given instead of an upload is fetched once when the configuration is saved (http/https,
// 10 s, same size and type checks) and stored the same way, so the login page never loads anything
// from another origin. The fetch goes through the request-forgery guard (util/outbound.ts: global
// addresses only, every redirect hop checked again, at most 3): a refused target is 400 "not allowed",
// any other failure "could not be fetched" (no status code, error text or port: the field must not
// tell a caller what answers where).
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { unprocessable } from '../util/errors.js';
import { BRANDING_MAX_BYTES } from './schema.js';
import { FetchFailed, guardedRequest, NotAllowed, type OutboundPolicy } from '../util/outbound.js';

export type BrandingKind = 'logo' | 'bg_image';
export interface ImageType {
  ext: 'png' | 'jpg' | 'gif' | 'webp';
  mime: string;
}

const TYPES: Record<ImageType['ext'], string> = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** The image type by content, or null. */
export function sniffImage(b: Uint8Array): ImageType | null {
  const at = (i: number, bytes: number[]) => bytes.every((x, k) => b[i + k] === x);
  const ascii = (i: number, s: string) =>
    at(
      i,
      [...s].map((c) => c.charCodeAt(0)),
    );
  if (b.length >= 8 && at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { ext: 'png', mime: TYPES.png };
  if (b.length >= 3 && at(0, [0xff, 0xd8, 0xff])) return { ext: 'jpg', mime: TYPES.jpg };
  if (b.length >= 6 && (ascii(0, 'GIF87a') || ascii(0, 'GIF89a'))) return { ext: 'gif', mime: TYPES.gif };
  if (b.length >= 12 && ascii(0, 'RIFF') && ascii(8, 'WEBP')) return { ext: 'webp', mime: TYPES.webp };
  return null;
}

const FILE_RE = /^route-(\d+)-(logo|bg)-([a-f0-9]{16})\.(png|jpg|gif|webp)$/;

export function mimeOfFile(name: string): string | null {
  const m = FILE_RE.exec(name);
  return m ? TYPES[m[4] as ImageType['ext']] : null;
}

export class BrandingStore {
  readonly dir: string;
  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'branding');
  }

  /** Checks and writes an image; returns its file name. Throws 422 (field `field`) when refused: the content is what no schema can judge. */
  write(routeId: number, kind: BrandingKind, data: Uint8Array, field: string): string {
    if (!data.length) throw unprocessable(msg('route_auth.image_empty'), { [field]: msg('field.empty_file') });
    if (data.length > BRANDING_MAX_BYTES)
      throw unprocessable(msg('route_auth.image_too_large', { max_bytes: BRANDING_MAX_BYTES }), {
        [field]: msg('field.max_bytes', { max: BRANDING_MAX_BYTES }),
      });
    const type = sniffImage(data);
    if (!type) throw unprocessable(msg('route_auth.image_type'), { [field]: msg('route_auth.field.image_type') });
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    const name = `route-${routeId}-${kind === 'logo' ? 'logo' : 'bg'}-${crypto.randomBytes(8).toString('hex')}.${type.ext}`;
    fs.writeFileSync(path.join(this.dir, name), data, { mode: 0o644 });
    return name;
  }

  /** Absolute path of a stored file, or null when the name is not one of ours. */
  file(name: string | null | undefined): string | null {
    if (!name || !FILE_RE.test(name)) return null;
    return path.join(this.dir, name);
  }

  remove(name: string | null | undefined): void {
    const f = this.file(name);
    if (f) fs.rmSync(f, { force: true });
  }

  /** Removes files whose route is not in `keep` (route deleted, configuration deleted). */
  removeOrphans(keep: Set<string>): number {
    let n = 0;
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      if (FILE_RE.test(name) && !keep.has(name)) {
        fs.rmSync(path.join(this.dir, name), { force: true });
        n++;
      }
    }
    return n;
  }
}

/** GETs an image URL through the guard (policy: deps.outbound('branding')). Throws 400 on field `field` when it cannot be used. */
export async function fetchImage(url: string, field: string, policy: OutboundPolicy): Promise<Uint8Array> {
  let res;
  try {
    res = await guardedRequest(url, {
      policy,
      timeoutMs: 10_000,
      maxBytes: BRANDING_MAX_BYTES,
      maxRedirects: 3,
      headers: { accept: 'image/png,image/jpeg,image/gif,image/webp' },
    });
  } catch (err) {
    if (err instanceof NotAllowed) throw unprocessable(msg('route_auth.not_allowed'), { [field]: msg('field.not_allowed') });
    if (err instanceof FetchFailed && err.kind === 'too_large')
      throw unprocessable(msg('route_auth.image_too_large', { max_bytes: BRANDING_MAX_BYTES }), {
        [field]: msg('field.max_bytes', { max: BRANDING_MAX_BYTES }),
      });
    throw unprocessable(msg('route_auth.not_fetched'), { [field]: msg('field.not_fetched') });
  }
  if (res.status < 200 || res.status > 299 || !res.body.length) throw unprocessable(msg('route_auth.not_fetched'), { [field]: msg('field.not_fetched') });
  return res.body;
}
