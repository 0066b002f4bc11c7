// A software authenticator for API tests of passkeys: a real ECDSA P-256 key pair (node:crypto) and
// the WebAuthn structures built as the specification lays them out (authenticator data, COSE key,
// attestation object in CBOR through @simplewebauthn/server's own encoder, "none" attestation), so
// that the server's @simplewebauthn/server verifies them exactly as it verifies a browser's. Nothing
// is faked on the server side: a wrong origin, challenge, key or counter fails there.
import crypto from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (b: Uint8Array | Buffer) => isoBase64URL.fromBuffer(new Uint8Array(b));
const sha256 = (b: Uint8Array | Buffer | string) => crypto.createHash('sha256').update(b).digest();

export interface SoftwarePasskey {
  /** base64url credential id */
  id: string;
  /** the authenticator's signature counter (moves on with every assertion) */
  counter: number;
  userHandle?: string;
  /** answers navigator.credentials.create() options */
  register(options: Record<string, unknown>, origin: string): Record<string, unknown>;
  /** answers navigator.credentials.get() options */
  assert(options: Record<string, unknown>, origin: string, o?: { userVerified?: boolean; counter?: number }): Record<string, unknown>;
}

/** The text at a path of WebAuthn options as the server sent them (options JSON; fails naming the path). */
function text(options: Record<string, unknown>, ...path: string[]): string {
  let v: unknown = options;
  for (const k of path) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  if (typeof v !== 'string') throw new Error(`WebAuthn options: ${path.join('.')} is not a string: ${JSON.stringify(options)}`);
  return v;
}

export function softwarePasskey(): SoftwarePasskey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const rawId = crypto.randomBytes(32);
  const flags = (uv: boolean, at: boolean) => 0x01 | (uv ? 0x04 : 0) | (at ? 0x40 : 0);
  const counterBytes = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const clientData = (type: string, challenge: string, origin: string) => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  const key: SoftwarePasskey = {
    id: b64(rawId),
    counter: 0,
    register(options, origin) {
      const rpId = text(options, 'rp', 'id');
      key.userHandle = text(options, 'user', 'id');
      const cose = new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]);
      const credLen = Buffer.alloc(2);
      credLen.writeUInt16BE(rawId.length);
      const authData = Buffer.concat([
        sha256(rpId),
        Buffer.from([flags(true, true)]),
        counterBytes(key.counter),
        Buffer.alloc(16), // AAGUID
        credLen,
        rawId,
        Buffer.from(isoCBOR.encode(cose)),
      ]);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', new Uint8Array(authData)],
        ]) as never,
      );
      return {
        id: key.id,
        rawId: key.id,
        type: 'public-key',
        clientExtensionResults: {},
        authenticatorAttachment: 'cross-platform',
        response: {
          clientDataJSON: b64(clientData('webauthn.create', text(options, 'challenge'), origin)),
          attestationObject: b64(attestationObject),
          transports: ['usb'],
        },
      };
    },
    assert(options, origin, o = {}) {
      key.counter = o.counter ?? key.counter + 1;
      const authData = Buffer.concat([sha256(text(options, 'rpId')), Buffer.from([flags(o.userVerified ?? true, false)]), counterBytes(key.counter)]);
      const cd = clientData('webauthn.get', text(options, 'challenge'), origin);
      const signature = crypto.sign('sha256', Buffer.concat([authData, sha256(cd)]), privateKey);
      return {
        id: key.id,
        rawId: key.id,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64(cd),
          authenticatorData: b64(authData),
          signature: b64(signature),
          ...(key.userHandle ? { userHandle: key.userHandle } : {}),
        },
      };
    },
  };
  return key;
}
