// Secrets at rest (WireGuard private keys, SMTP password, TOTP secrets, push tokens) are sealed
// with AES-256-GCM under a master key kept outside the database: a 32-byte file (mode 0600) in the
// data directory or at GATEHOUSE_MASTER_KEY_FILE. Sealed text: "v1:<iv>:<tag>:<ciphertext>" (base64url).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** SHA-256 of a text, hex (how tokens are stored: only their hash). */
export function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

/** A value sealed with a master key (MasterKey.seal), anywhere in a text. */
export const MASTER_SEALED = /v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*/g;

export class MasterKey {
  private constructor(private key: Buffer) {}

  static loadOrCreate(file: string): { key: MasterKey; created: boolean } {
    if (fs.existsSync(file)) return { key: MasterKey.load(file), created: false };
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const key = MasterKey.generate();
    fs.writeFileSync(file, key.fileText(), { mode: 0o600, flag: 'wx' });
    return { key, created: true };
  }

  /** Reads a key file (32 raw bytes, or their base64); throws when it is missing or malformed. */
  static load(file: string): MasterKey {
    const raw = fs.readFileSync(file);
    const key = raw.length === 32 ? raw : Buffer.from(raw.toString('utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`master key ${file} must hold 32 bytes (raw or base64)`);
    return new MasterKey(key);
  }

  /** A new random key (master-key rotation, first start). */
  static generate(): MasterKey {
    return new MasterKey(crypto.randomBytes(32));
  }

  /** What a key file holds: the key in base64 and a newline. */
  fileText(): string {
    return this.key.toString('base64') + '\n';
  }

  /** The same key (compares in constant time). */
  equals(other: MasterKey): boolean {
    return crypto.timingSafeEqual(this.key, other.key);
  }

  static fromBuffer(key: Buffer): MasterKey {
    return new MasterKey(key);
  }

  /** A sub-key for one purpose (session cookie signing, internal shared secrets). */
  derive(label: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(`gatehouse:${label}`).digest();
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12);
    const c = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1:${iv.toString('base64url')}:${c.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
  }

  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed value');
    const d = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  }
}
