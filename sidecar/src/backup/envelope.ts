// The passphrase envelope of a backup document (docs/guides/backup.md).
//
// A backup must bring every tunnel and login back on a fresh install, whose master key is new, so the
// secrets cannot travel sealed under the master key of the server that made them; and they must never
// travel in plaintext. They travel sealed under a key derived from a passphrase the admin gives:
//
//   key  = scrypt(passphrase, salt, N=2^15, r=8, p=1, 32 bytes)      salt: 16 random bytes per document
//   enc  = HKDF-SHA256(key, "", "gatehouse-backup enc", 32)   mac = HKDF-SHA256(key, "", "gatehouse-backup mac", 32)
//   each secret value: "bk1:<iv>:<tag>:<ciphertext>" (base64url), AES-256-GCM under enc, 12-byte random
//     iv, additional data "<section>.<column>" (a sealed value cannot be moved to another field)
//   the whole document: integrity.hmac = HMAC-SHA256(mac, canonical JSON of the document without
//     `integrity`) - a document changed after it was made (or cut off) is refused before anything is read
//   encryption.check: the text "gatehouse-backup" sealed the same way, so a wrong passphrase is told
//     apart from a damaged document.
//
// Why scrypt: it is memory-hard (32 MiB per guess here), built into Node (no native addon on the
// restore path) and a standard construction any tool can re-implement to open a document by hand.
// Why AES-256-GCM: the cipher the master key already uses (util/crypto.ts), authenticated.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import { unprocessable, validation } from '../util/errors.js';
import { PASSPHRASE_MIN, type EncryptionHeader } from './schema.js';

export const KDF = { name: 'scrypt', N: 32768, r: 8, p: 1 } as const;
const CHECK_TEXT = 'gatehouse-backup';

export class PassphraseKey {
  private constructor(
    private readonly enc: Buffer,
    private readonly mac: Buffer,
    readonly header: EncryptionHeader,
  ) {}

  /** A new key for a new document (random salt). */
  static async create(passphrase: string): Promise<PassphraseKey> {
    checkPassphrase(passphrase);
    const salt = crypto.randomBytes(16).toString('base64url');
    const { enc, mac } = await derive(passphrase, salt, KDF.N, KDF.r, KDF.p);
    const header: EncryptionHeader = { kdf: 'scrypt', N: KDF.N, r: KDF.r, p: KDF.p, salt, cipher: 'aes-256-gcm', check: '' };
    const key = new PassphraseKey(enc, mac, header);
    header.check = key.seal(CHECK_TEXT, 'encryption.check');
    return key;
  }

  /** The key of an existing document; 400 fields.passphrase when it is not the document's passphrase. */
  static async open(passphrase: string, header: EncryptionHeader): Promise<PassphraseKey> {
    if (typeof passphrase !== 'string' || !passphrase) throw validation(msg('backup.passphrase_needed'), { passphrase: msg('field.required') });
    if (header.N > 2 ** 20 || header.r > 32 || header.p > 16)
      throw unprocessable(msg('backup.kdf_out_of_range'), { encryption: msg('backup.field.unsupported_parameters') });
    const { enc, mac } = await derive(passphrase, header.salt, header.N, header.r, header.p);
    const key = new PassphraseKey(enc, mac, header);
    let ok = false;
    try {
      ok = key.open(header.check, 'encryption.check') === CHECK_TEXT;
    } catch {
      ok = false;
    }
    if (!ok) throw unprocessable(msg('backup.wrong_passphrase'), { passphrase: msg('backup.field.wrong_passphrase') });
    return key;
  }

  seal(plain: string, aad: string): string {
    const iv = crypto.randomBytes(12);
    const c = crypto.createCipheriv('aes-256-gcm', this.enc, iv);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `bk1:${iv.toString('base64url')}:${c.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
  }

  /** Throws when the value is not sealed under this key for this field. */
  open(sealed: string, aad: string): string {
    const [v, iv, tag, ct] = String(sealed).split(':');
    if (v !== 'bk1' || !iv || !tag || ct === undefined) throw new Error('not a sealed backup value');
    const d = crypto.createDecipheriv('aes-256-gcm', this.enc, Buffer.from(iv, 'base64url'));
    d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  }

  hmac(text: string): string {
    return crypto.createHmac('sha256', this.mac).update(text, 'utf8').digest('base64url');
  }

  verify(text: string, given: unknown): boolean {
    const want = Buffer.from(this.hmac(text));
    const got = Buffer.from(typeof given === 'string' ? given : '');
    return want.length === got.length && crypto.timingSafeEqual(want, got);
  }
}

export function checkPassphrase(passphrase: unknown): asserts passphrase is string {
  if (typeof passphrase !== 'string' || passphrase.length < PASSPHRASE_MIN) {
    throw validation(msg('backup.passphrase_too_short', { min: PASSPHRASE_MIN }), { passphrase: msg('field.min_chars', { min: PASSPHRASE_MIN }) });
  }
  if (passphrase.length > 1024) throw validation(msg('backup.passphrase_too_long'), { passphrase: msg('field.max_chars', { max: 1024 }) });
}

async function derive(passphrase: string, salt: string, N: number, r: number, p: number): Promise<{ enc: Buffer; mac: Buffer }> {
  const key = await new Promise<Buffer>((resolve, reject) =>
    crypto.scrypt(passphrase.normalize('NFC'), Buffer.from(salt, 'base64url'), 32, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, k) =>
      err ? reject(validation(msg('backup.kdf_failed', { error: err.message }), { encryption: msg('backup.field.unsupported_parameters') })) : resolve(k),
    ),
  );
  const enc = Buffer.from(crypto.hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse-backup enc', 32));
  const mac = Buffer.from(crypto.hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse-backup mac', 32));
  return { enc, mac };
}
