// Test certificates made with the system's openssl: a CA and a leaf it signs for the given DNS names,
// with the validity the test asks for (past dates included: `openssl ca -startdate/-enddate`), an
// EC P-256 key by default. For tests of custom certificate upload (sidecar/test/certificates*.ts,
// test/ui/certificates.test.ts).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestChain {
  /** the CA's certificate (PEM) */
  ca: string;
  caKey: string;
  /** the leaf (PEM) */
  leaf: string;
  /** the leaf's private key (PKCS#8 PEM) */
  key: string;
  /** leaf + CA, as an upload sends it */
  chain: string;
  /** SHA-256 of the leaf's DER, upper-case hex with colons */
  fingerprint: string;
}

/** openssl's date: UTCTime (YYMMDDHHMMSSZ) before 2050, GeneralizedTime (YYYYMMDDHHMMSSZ) from then on (RFC 5280). */
const stamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:T]/g, '')
    .slice(d.getUTCFullYear() < 2050 ? 2 : 0, 14) + 'Z';

/** A CA and a leaf for `names`, valid from `start` to `end` (default: an hour ago to 90 days ahead). */
export function makeChain(o: { names: string[]; start?: Date; end?: Date; keyType?: 'ec' | 'rsa'; ca?: { cert: string; key: string } }): TestChain {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-certs-'));
  const f = (n: string) => path.join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const keyArgs = (out: string) =>
    o.keyType === 'rsa'
      ? ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', out]
      : ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', out];
  try {
    if (o.ca) {
      fs.writeFileSync(f('ca.crt'), o.ca.cert);
      fs.writeFileSync(f('ca.key'), o.ca.key);
    } else {
      ssl(...keyArgs('ca.key'));
      ssl(
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        '/CN=Gatehouse Test CA',
        '-days',
        '3650',
        '-out',
        'ca.crt',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      );
    }
    ssl(...keyArgs('leaf.key'));
    ssl('req', '-new', '-key', 'leaf.key', '-subj', `/CN=${o.names[0]}`, '-out', 'leaf.csr');
    fs.writeFileSync(f('index.txt'), '');
    fs.writeFileSync(f('serial'), crypto.randomBytes(8).toString('hex').replace(/^./, '1') + '\n');
    fs.writeFileSync(
      f('ca.cnf'),
      [
        '[ca]',
        'default_ca = d',
        '[d]',
        `dir = ${dir}`,
        `database = ${f('index.txt')}`,
        `new_certs_dir = ${dir}`,
        `serial = ${f('serial')}`,
        `certificate = ${f('ca.crt')}`,
        `private_key = ${f('ca.key')}`,
        'default_md = sha256',
        'policy = p',
        'unique_subject = no',
        '[p]',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      f('ext.cnf'),
      `subjectAltName=${o.names.map((n) => `DNS:${n}`).join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
    );
    const start = o.start ?? new Date(Date.now() - 3_600_000);
    const end = o.end ?? new Date(Date.now() + 90 * 86_400_000);
    ssl(
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-notext',
      '-in',
      'leaf.csr',
      '-out',
      'leaf.crt',
      '-extfile',
      'ext.cnf',
      '-startdate',
      stamp(start),
      '-enddate',
      stamp(end),
    );
    const leaf = fs.readFileSync(f('leaf.crt'), 'utf8');
    const ca = fs.readFileSync(f('ca.crt'), 'utf8');
    const key = crypto.createPrivateKey(fs.readFileSync(f('leaf.key'))).export({ type: 'pkcs8', format: 'pem' }) as string;
    const fingerprint = new crypto.X509Certificate(leaf).fingerprint256;
    return { ca, caKey: fs.readFileSync(f('ca.key'), 'utf8'), leaf, key, chain: leaf.trim() + '\n' + ca, fingerprint };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
