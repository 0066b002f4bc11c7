// The server's RSA key pairs for RDP credential envelopes (@gatehouse/common/rdp-credentials,
// scheme RSA-OAEP-256+A256GCM). The current pair is made on first need (GET /rdp/pubkey, or the
// first credentials stored); its private half is kept only sealed under the master key
// (rdp_server_keys.private_key_sealed) and opened in memory when a desktop client's connect needs
// it. rotate() makes a new pair and retires the old one (a master-key rotation does it, through
// RdpService.onMasterKeyRotated); a retired key opens nothing any more. Exactly one row has
// retired_at null.
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import type { MasterKey } from '../util/crypto.js';
import { exportPrivateKey, exportPublicKey, generateEnvelopeKeyPair, importPrivateKey, keyId, RDP_ENVELOPE_ALG } from '@gatehouse/common/rdp-credentials.js';
import type { RdpServerKeyRow } from './model.js';

export interface RdpPublicKey {
  kid: string;
  /** base64 SPKI DER */
  publicKey: string;
  alg: typeof RDP_ENVELOPE_ALG;
}

export interface RdpKeysOptions {
  db: Database;
  clock: Clock;
  /** The master key the private halves are sealed under (replaced by useMasterKey after a rotation). */
  masterKey: MasterKey;
  /** RSA modulus length of new pairs (default 3072; tests may pass 2048 to save time). */
  modulusLength?: number;
}

export class RdpKeys {
  private readonly db: Database;
  private readonly clock: Clock;
  private masterKey: MasterKey;
  private readonly modulusLength: number;
  /** A key being made: concurrent first callers wait for the same one. */
  private making: Promise<RdpPublicKey> | null = null;
  /** Opened private keys by kid (dropped when a key is retired). */
  private readonly opened = new Map<string, CryptoKey>();

  constructor(o: RdpKeysOptions) {
    this.db = o.db;
    this.clock = o.clock;
    this.masterKey = o.masterKey;
    this.modulusLength = o.modulusLength ?? 3072;
  }

  private get model() {
    return this.db.models.RdpServerKey;
  }

  /** After a master-key rotation: the key the sealed private halves are (now) sealed under. */
  useMasterKey(key: MasterKey): void {
    this.masterKey = key;
    this.opened.clear();
  }

  /** The current key row, or null when none was made yet. */
  async currentRow(transaction?: Transaction): Promise<RdpServerKeyRow | null> {
    return (await this.model.findOne({ where: { retired_at: null }, order: [['created_at', 'DESC']], raw: true, transaction })) as RdpServerKeyRow | null;
  }

  /** The current key id, or null when no key was made yet (no envelope can be valid then). */
  async currentKid(transaction?: Transaction): Promise<string | null> {
    return (await this.currentRow(transaction))?.kid ?? null;
  }

  /** The current public key, made (and stored) on first need. */
  async current(): Promise<RdpPublicKey> {
    const row = await this.currentRow();
    if (row) return { kid: row.kid, publicKey: row.public_key, alg: RDP_ENVELOPE_ALG };
    this.making ??= this.make(false).finally(() => {
      this.making = null;
    });
    return this.making;
  }

  /**
   * Makes a new pair and retires the current one (if any), in one transaction. Returns the new public
   * key. With `transaction` (a master-key rotation's) the rows are written in it, the new private half
   * is sealed with `masterKey`, and that key is used from the commit on (nothing changes on rollback).
   */
  async rotate(opts: { transaction?: Transaction; masterKey?: MasterKey } = {}): Promise<RdpPublicKey> {
    // wait for a first key being made, so that it is retired rather than left beside the new one
    if (this.making) await this.making.catch(() => undefined);
    if (opts.transaction) {
      const { transaction, masterKey } = opts;
      const made = await this.make(true, transaction, masterKey);
      transaction.afterCommit(() => {
        if (masterKey) this.masterKey = masterKey;
        this.opened.clear();
      });
      return made;
    }
    const p = this.make(true);
    this.making = p.finally(() => {
      this.making = null;
    });
    return p;
  }

  private async make(retireCurrent: boolean, transaction?: Transaction, masterKey: MasterKey = this.masterKey): Promise<RdpPublicKey> {
    const pair = await generateEnvelopeKeyPair(this.modulusLength);
    const publicKey = await exportPublicKey(pair.publicKey);
    const kid = await keyId(publicKey);
    const sealed = masterKey.seal(await exportPrivateKey(pair.privateKey));
    const now = this.clock();
    const write = async (t: Transaction) => {
      const existing = await this.currentRow(t);
      if (existing && !retireCurrent) return { kid: existing.kid, publicKey: existing.public_key };
      if (existing) await this.model.update({ retired_at: now }, { where: { retired_at: null }, transaction: t });
      await this.model.create({ kid, public_key: publicKey, private_key_sealed: sealed, created_at: now, retired_at: null }, { transaction: t });
      return { kid, publicKey };
    };
    const made = transaction ? await write(transaction) : await this.db.sequelize.transaction(write);
    if (retireCurrent && !transaction) this.opened.clear();
    return { ...made, alg: RDP_ENVELOPE_ALG };
  }

  /** The private key of `kid`, opened from its sealed row. Throws for an unknown or retired key id. */
  async privateKeyFor(kid: string): Promise<CryptoKey> {
    const row = (await this.model.findByPk(kid, { raw: true })) as RdpServerKeyRow | null;
    if (!row) throw new Error(`unknown RDP key id ${kid}`);
    if (row.retired_at !== null) throw new Error(`RDP key ${kid} is retired (the credentials made for it must be entered again)`);
    const cached = this.opened.get(kid);
    if (cached) return cached;
    const key = await importPrivateKey(this.masterKey.open(row.private_key_sealed));
    this.opened.set(kid, key);
    return key;
  }
}
