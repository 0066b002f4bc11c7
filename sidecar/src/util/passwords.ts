// Admin passwords are argon2id. Old bcrypt hashes ($2a$/$2b$/$2y$) still verify and are
// replaced by argon2id at the next successful login (needsRehash).
import argon2 from 'argon2';
import bcrypt from 'bcrypt';

export async function hashPassword(plain: string): Promise<string> {
  return argon2.hash(plain, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export function isBcrypt(hash: string): boolean {
  return /^\$2[aby]\$/.test(hash);
}

export async function verifyPassword(hash: string, plain: string): Promise<boolean> {
  try {
    if (isBcrypt(hash)) return await bcrypt.compare(plain, hash);
    if (hash.startsWith('$argon2')) return await argon2.verify(hash, plain);
  } catch {
    return false;
  }
  return false;
}

export function needsRehash(hash: string): boolean {
  return !hash.startsWith('$argon2id$');
}

/** bcrypt, for basic-auth and route-auth accounts. */
export async function bcryptHash(plain: string): Promise<string> {
  return bcrypt.hash(plain, 12);
}

// A fixed argon2id hash to verify against when the user does not exist, so the response time does
// not reveal which usernames exist.
let dummy: Promise<string> | undefined;
export async function dummyVerify(plain: string): Promise<void> {
  dummy ??= hashPassword('gatehouse-dummy-password');
  await verifyPassword(await dummy, plain);
}
