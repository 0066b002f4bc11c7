// Domain errors. Services throw these and know nothing about HTTP; the one error middleware in
// http/errors.ts maps each kind to a status code and the API's error body {ok:false, error, fields?}.
export type ErrorKind =
  | 'validation'
  | 'unprocessable'
  | 'unsupported_media_type'
  | 'method_not_allowed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'locked'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unavailable'
  | 'upstream';

export class AppError extends Error {
  constructor(
    public readonly kind: ErrorKind,
    message: string,
    public readonly fields?: Record<string, string>,
    public readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const validation = (message: string, fields?: Record<string, string>) => new AppError('validation', message, fields);
/**
 * A request its schemas allow that the server still cannot carry out, for a reason no schema can
 * state: a referenced row that does not exist, a combination with the stored record, a wrong
 * current password, a licence key or backup file whose content does not verify (422, with fields).
 */
export const unprocessable = (message: string, fields?: Record<string, string>) => new AppError('unprocessable', message, fields);
export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (message: string, extra?: Record<string, unknown>) => new AppError('conflict', message, undefined, extra);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const unauthorized = (message = 'Authentication required') => new AppError('unauthorized', message);
