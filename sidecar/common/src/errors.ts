// Domain errors. Services throw these and know nothing about HTTP; the one error middleware in
// http/errors.ts maps each kind to a status code and the body {ok:false, error, code, params?,
// fields?, field_codes?}. Every error carries a message of the catalogue (messages/index.ts): its
// code and parameters for a client that words it in its reader's language, and its English text.
import { msg, type Msg } from './messages/index.js';

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

/** Per-field messages: the field's name (a dotted path for nested ones) → why it was refused. */
export type FieldMessages = Record<string, Msg>;

export class AppError extends Error {
  /** the English text of each field's message, by field (the body's `fields`) */
  public readonly fields?: Record<string, string>;

  constructor(
    public readonly kind: ErrorKind,
    /** the message (its English text is Error.message) */
    public readonly msg: Msg,
    /** the field messages (the body's `fields` and `field_codes`) */
    public readonly fieldMessages?: FieldMessages,
    public readonly extra?: Record<string, unknown>,
  ) {
    super(msg.text);
    if (fieldMessages) this.fields = Object.fromEntries(Object.entries(fieldMessages).map(([k, m]) => [k, m.text]));
  }
}

export const validation = (message: Msg, fields?: FieldMessages) => new AppError('validation', message, fields);
/**
 * A request its schemas allow that the server still cannot carry out, for a reason no schema can
 * state: a referenced row that does not exist, a combination with the stored record, a wrong
 * current password, a licence key or backup file whose content does not verify (422, with fields).
 */
export const unprocessable = (message: Msg, fields?: FieldMessages) => new AppError('unprocessable', message, fields);
/** 422 "Validation failed" with the fields that say why. */
export const invalidFields = (fields: FieldMessages) => new AppError('unprocessable', msg('request.validation_failed'), fields);
export const notFound = (message: Msg) => new AppError('not_found', message);
export const conflict = (message: Msg, extra?: Record<string, unknown>, fields?: FieldMessages) => new AppError('conflict', message, fields, extra);
export const forbidden = (message: Msg) => new AppError('forbidden', message);
export const unauthorized = (message: Msg = msg('auth.required')) => new AppError('unauthorized', message);
