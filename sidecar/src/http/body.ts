// Request bodies, all through koa-body (the design's body parser): JSON and urlencoded forms for
// ordinary endpoints and the route-auth pages, multipart/form-data for uploads (kept in memory,
// never written to a temporary file). The limits here are the documented ones (docs/reference/api.md "Limits").
import { Writable } from 'node:stream';
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { msg } from '@gatehouse/common/messages/index.js';
import { AppError, validation } from '../util/errors.js';

/** Largest JSON body of an API request. */
export const JSON_LIMIT_BYTES = 1024 * 1024;
/** Largest urlencoded form body of an API request. */
export const FORM_LIMIT_BYTES = 256 * 1024;
/** Largest form body of a route-auth login page (a few short fields). */
export const PAGE_FORM_LIMIT_BYTES = 16 * 1024;
/** Deepest nesting of objects and arrays a JSON body may have. */
export const MAX_JSON_DEPTH = 64;
/** What a multipart request may carry besides its one file (boundaries, part headers, small fields). */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

type Options = NonNullable<Parameters<typeof koaBody>[0]>;
/** formidable's part (koa-body's multipart parser), as koa-body's types name it. */
type Part = Parameters<NonNullable<NonNullable<Options['formidable']>['onPart']>>[0];
/** What this module reads of formidable's file objects. */
interface FormidableFile {
  originalFilename: string | null;
  mimetype: string | null;
}

/** Sets ctx.request.body ({} when nothing was parsed) and, for JSON and forms, ctx.request.rawBody. */
function jsonAndForm(o: { json: boolean; jsonLimit: number; formLimit: number }): Koa.Middleware {
  const parse = koaBody({
    json: o.json,
    urlencoded: true,
    text: false,
    multipart: false,
    jsonLimit: o.jsonLimit,
    formLimit: o.formLimit,
    encoding: 'utf-8',
    includeUnparsed: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
    // reason: koa-body's middleware is typed for its own Koa context type, not this app's
  } as Options) as unknown as Koa.Middleware;
  return async (ctx, next) => {
    await parse(ctx, async () => undefined);
    const raw = (ctx.request as { rawBody?: unknown }).rawBody;
    // The decoder turns bytes that are not UTF-8 into U+FFFD; refuse them rather than store them so.
    if (typeof raw === 'string' && raw.includes('\uFFFD'))
      throw clientError(400, 'Request body is not valid UTF-8 (or contains U+FFFD, the replacement character)');
    if (ctx.request.body === undefined) ctx.request.body = {};
    else if (depthOver(ctx.request.body, MAX_JSON_DEPTH)) throw clientError(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    await next();
  };
}

/** An error the error middleware answers with its status and message (like the parser's own). */
function clientError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status, expose: true });
}

/** Whether objects and arrays in v nest deeper than max (iterative: the value may be very deep). */
export function depthOver(v: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d > max) return true;
    for (const c of Array.isArray(x) ? x : Object.values(x)) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return false;
}

/** JSON (at most JSON_LIMIT_BYTES) and urlencoded forms (FORM_LIMIT_BYTES) of the API endpoints. */
export function apiBody(): Koa.Middleware {
  return jsonAndForm({ json: true, jsonLimit: JSON_LIMIT_BYTES, formLimit: FORM_LIMIT_BYTES });
}

/** The urlencoded forms of the route-auth login pages (PAGE_FORM_LIMIT_BYTES); JSON is not parsed there. */
export function pageFormBody(): Koa.Middleware {
  return jsonAndForm({ json: false, jsonLimit: JSON_LIMIT_BYTES, formLimit: PAGE_FORM_LIMIT_BYTES });
}

/** The one file of a multipart upload, as uploadedFile() returns it. */
export interface UploadedFile {
  buffer: Buffer;
  /** The client's file name, for messages only (never used as a path). */
  name: string | null;
  /** The client's declared type, for messages only (uploads are judged by their content). */
  type: string | null;
  size: number;
}

const UPLOAD = Symbol('gatehouse.upload');

/** The file an upload endpoint received (undefined when the request carried none). */
export function uploadedFile(ctx: Koa.Context): UploadedFile | undefined {
  return (ctx.state as Record<symbol, UploadedFile | undefined>)[UPLOAD];
}

/** Formidable's codes for a file over its size limits. */
const TOO_LARGE = new Set([1009, 1016]);

/**
 * multipart/form-data with exactly one file in `field` of at most `maxBytes` bytes, kept in memory.
 * A file over the limit is a 400 with `fields[field]` (the upload is judged like any other field); a
 * request whose declared length exceeds the file limit plus MULTIPART_OVERHEAD_BYTES is refused
 * with 413 before anything is read. A request that is not multipart passes through with no file.
 */
export function multipartBody(field: string, maxBytes: number): Koa.Middleware {
  const buffers = new WeakMap<object, Buffer[]>();
  const parse = koaBody({
    json: false,
    urlencoded: false,
    text: false,
    multipart: true,
    parsedMethods: ['POST', 'PUT', 'PATCH'],
    formidable: {
      maxFiles: 1,
      maxFileSize: maxBytes,
      maxTotalFileSize: maxBytes,
      allowEmptyFiles: true,
      minFileSize: 0,
      maxFields: 20,
      maxFieldsSize: 16 * 1024,
      fileWriteStreamHandler: (file?: unknown) => {
        const chunks: Buffer[] = [];
        buffers.set(file as object, chunks);
        return new Writable({
          write(chunk: Buffer, _enc, cb) {
            chunks.push(chunk);
            cb();
          },
        });
      },
      // a part with a file name but no Content-Type is still a file (formidable would call it a field)
      onPart: (part: Part, handle: (p: Part) => void) => {
        if (part.originalFilename && !part.mimetype) part.mimetype = 'application/octet-stream';
        handle(part);
      },
    },
    // reason: koa-body's middleware is typed for its own Koa context type, not this app's
  } as Options) as unknown as Koa.Middleware;
  const limit = maxBytes + MULTIPART_OVERHEAD_BYTES;
  return async (ctx, next) => {
    const declared = Number(ctx.get('Content-Length'));
    if (ctx.is('multipart') && Number.isFinite(declared) && declared > limit) {
      throw new AppError('payload_too_large', msg('request.upload_too_large', { limit, max_bytes: maxBytes }));
    }
    try {
      await parse(ctx, async () => undefined);
    } catch (caught) {
      const err = caught as { code?: number; message?: string } | null;
      if (TOO_LARGE.has(err?.code ?? 0))
        throw validation(msg('request.file_too_large', { max_bytes: maxBytes }), { [field]: msg('field.max_bytes', { max: maxBytes }) });
      throw validation(msg('request.upload_failed', { reason: String(err?.message ?? err) }), { [field]: msg('field.invalid_upload') });
    }
    const files = (ctx.request.files ?? {}) as Record<string, FormidableFile | FormidableFile[]>;
    // one file in all (maxFiles), and only in the declared field
    if (Object.keys(files).some((n) => n !== field))
      throw validation(msg('request.unexpected_file_field', { field }), { [field]: msg('field.invalid_upload') });
    const got = files[field];
    if (Array.isArray(got) && got.length > 1) throw validation(msg('request.one_file_only'), { [field]: msg('field.invalid_upload') });
    const f = Array.isArray(got) ? got[0] : got;
    if (f) {
      const buffer = Buffer.concat(buffers.get(f) ?? []);
      (ctx.state as Record<symbol, UploadedFile>)[UPLOAD] = { buffer, name: f.originalFilename ?? null, type: f.mimetype ?? null, size: buffer.length };
    }
    await next();
  };
}
