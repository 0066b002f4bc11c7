// The machine fingerprint the client sends in X-Machine-Fingerprint on every call (the header API
// token binding uses: the server binds the token to the first fingerprint it sees, and refuses the
// token from any other machine afterwards).
//
//   fingerprint = hex(SHA-256("gatehouse-client-fingerprint-v1\n" + <machine id>))
//
// <machine id> is the first line of /etc/machine-id (else /var/lib/dbus/machine-id), the stable
// per-installation id systemd creates. It is hashed with a label so the raw machine id, which
// systemd says must not leave the machine, is never sent. It is recomputed on every run (not
// stored), so a state directory copied to another machine is refused by the server.
//
// Overrides (tests, where network namespaces share one /etc/machine-id): --fingerprint <value> /
// GATEHOUSE_CLIENT_FINGERPRINT sends that value as is (the server hashes whatever it gets), and
// --machine-id-file / GATEHOUSE_CLIENT_MACHINE_ID_FILE reads another file.
import crypto from 'node:crypto';
import fs from 'node:fs';

export const FINGERPRINT_HEADER = 'X-Machine-Fingerprint';
export const FINGERPRINT_LABEL = 'gatehouse-client-fingerprint-v1\n';
export const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id'];

export class FingerprintError extends Error {}

/** The fingerprint of a machine id (pure). */
export function fingerprintOf(machineId: string): string {
  const id = machineId.trim();
  if (!id) throw new FingerprintError('the machine id is empty');
  return crypto
    .createHash('sha256')
    .update(FINGERPRINT_LABEL + id)
    .digest('hex');
}

/** Reads the machine id: the first non-empty line of the first readable file. */
export function readMachineId(files: string[] = MACHINE_ID_FILES): string {
  for (const f of files) {
    let text: string;
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const line = text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean);
    if (line) return line;
  }
  throw new FingerprintError(`no machine id found (${files.join(', ')}); give --fingerprint or --machine-id-file`);
}

export function checkFingerprintOverride(value: string): string {
  const v = value.trim();
  if (!/^[\x21-\x7e]{8,256}$/.test(v)) throw new FingerprintError('--fingerprint must be 8 to 256 printable characters without spaces');
  return v;
}

/** The fingerprint to send: the override when given, else the one of this machine's id. */
export function machineFingerprint(o: { override?: string; machineIdFile?: string }): string {
  if (o.override) return checkFingerprintOverride(o.override);
  return fingerprintOf(readMachineId(o.machineIdFile ? [o.machineIdFile] : MACHINE_ID_FILES));
}
