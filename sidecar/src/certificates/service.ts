// Custom certificates: an admin uploads a certificate chain and its private key (PEM), checked with
// node:crypto (certificates/pem.ts), stored with the key sealed with the master key. A route uses a
// certificate when it names it (routes.certificate_id; the certificate must cover the route's
// domain); every other HTTPS route keeps its automatic certificate (ACME or the internal CA). Writes
// that change what Caddy serves (replace, delete) go through the proxy's transaction, so they are
// live in Caddy or not saved. The housekeeping job warns once per certificate when it expires within
// EXPIRY_WARNING_DAYS (activity row, webhook, live event).
import { Op, fn, col, where as sqlWhere, type Transaction } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import type { ProxyService } from '../proxy/service.js';
import { findRow, findRows } from '../db/define.js';
import { AppError, conflict, type FieldMessages } from '../util/errors.js';
import type { CertificateRow } from './model.js';
import { covers, parseChain, type ParsedChain } from './pem.js';
import { EXPIRY_WARNING_DAYS, type CertificateView, type CreateCertificateInput, type ReplaceCertificateInput } from './schema.js';

const DAY = 86_400_000;
const iso = (v: number) => new Date(Number(v)).toISOString();
const notFound = () => new AppError('not_found', msg('certificate.not_found'));

/** What the renderer gets of a certificate a route uses (proxy/fragments/custom-certs.ts). */
export interface CustomCertificate {
  id: number;
  name: string;
  certificate_pem: string;
  private_key_pem: string;
  names: string[];
}

export function parseNames(v: unknown): string[] {
  try {
    const a = JSON.parse(String(v)) as unknown;
    return Array.isArray(a) ? a.map(String) : [];
  } catch {
    return [];
  }
}

export class CertificatesService {
  constructor(
    private readonly deps: Deps,
    private readonly proxy: ProxyService,
  ) {}

  private get Cert() {
    return this.deps.db.models.Certificate;
  }
  private get Route() {
    return this.deps.db.models.Route;
  }

  private stateOf(notAfter: number): CertificateView['state'] {
    const left = Number(notAfter) - this.deps.clock();
    return left <= 0 ? 'expired' : left < EXPIRY_WARNING_DAYS * DAY ? 'expiring' : 'valid';
  }

  /** Whole days until notAfter (rounded down; negative once it has passed). */
  daysLeft(notAfter: number): number {
    return Math.floor((Number(notAfter) - this.deps.clock()) / DAY);
  }

  private async routesOf(ids: number[], transaction?: Transaction): Promise<Map<number, { id: number; domain: string }[]>> {
    const out = new Map<number, { id: number; domain: string }[]>();
    if (!ids.length) return out;
    const rows = await findRows(this.Route, {
      where: { certificate_id: { [Op.in]: ids } },
      attributes: ['id', 'domain', 'certificate_id'],
      order: [['domain', 'ASC']],
      transaction,
    });
    for (const r of rows) {
      const list = out.get(Number(r.certificate_id)) ?? [];
      list.push({ id: Number(r.id), domain: r.domain });
      out.set(Number(r.certificate_id), list);
    }
    return out;
  }

  private view(r: CertificateRow, routes: { id: number; domain: string }[]): CertificateView {
    return {
      id: Number(r.id),
      name: r.name,
      subject_names: parseNames(r.names),
      issuer: r.issuer,
      not_before: iso(r.not_before),
      not_after: iso(r.not_after),
      days_left: this.daysLeft(r.not_after),
      state: this.stateOf(r.not_after),
      fingerprint_sha256: r.fingerprint_sha256,
      chain_length: (r.certificate_pem.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length,
      routes,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
  }

  async list(): Promise<CertificateView[]> {
    const rows = await findRows(this.Cert, { order: [['name', 'ASC']] });
    const used = await this.routesOf(rows.map((r) => Number(r.id)));
    return rows.map((r) => this.view(r, used.get(Number(r.id)) ?? []));
  }

  private async row(id: number, transaction?: Transaction): Promise<CertificateRow> {
    const r = await findRow(this.Cert, { where: { id }, transaction });
    if (!r) throw notFound();
    return r;
  }

  async get(id: number, transaction?: Transaction): Promise<CertificateView> {
    const r = await this.row(id, transaction);
    return this.view(r, (await this.routesOf([id], transaction)).get(id) ?? []);
  }

  /** A certificate and the facts of it the route views show (routes/service.ts), by id. */
  async summaries(ids: number[]): Promise<Map<number, Pick<CertificateRow, 'id' | 'name' | 'issuer' | 'not_before' | 'not_after'>>> {
    if (!ids.length) return new Map();
    const rows = await findRows(this.Cert, { where: { id: { [Op.in]: ids } }, attributes: ['id', 'name', 'issuer', 'not_before', 'not_after'] });
    return new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id), not_before: Number(r.not_before), not_after: Number(r.not_after) }]));
  }

  /** Parses and checks a chain and its key; a name given is checked too, so that one 422 names every bad field. */
  private async check(
    certificatePem: string,
    privateKeyPem: string,
    name?: { name: string; selfId: number | null; transaction?: Transaction },
  ): Promise<ParsedChain> {
    const parsed = parseChain(certificatePem, privateKeyPem, this.deps.clock());
    if ('fields' in parsed) {
      const fields = { ...parsed.fields };
      if (name && (await this.takenBy(name.name, name.selfId, name.transaction)) !== null) fields.name = msg('certificate.field.name_taken');
      throw new AppError('unprocessable', msg('certificate.invalid'), fields);
    }
    return parsed.chain;
  }

  /** The id of another certificate with this name (any case), or null. */
  private async takenBy(name: string, selfId: number | null, transaction?: Transaction): Promise<number | null> {
    const other = await findRow(this.Cert, {
      where: { [Op.and]: [sqlWhere(fn('lower', col('name')), name.toLowerCase()), ...(selfId === null ? [] : [{ id: { [Op.ne]: selfId } }])] },
      attributes: ['id'],
      transaction,
    });
    return other ? Number(other.id) : null;
  }

  private async refuseTakenName(name: string, selfId: number | null, transaction?: Transaction): Promise<void> {
    const other = await this.takenBy(name, selfId, transaction);
    if (other !== null)
      throw conflict(msg('certificate.name_taken', { name }), { field: 'name', certificate_id: other }, { name: msg('certificate.field.name_taken') });
  }

  /**
   * The checks of a body the schema refused for other fields (http/registry.ts storedChecks): the
   * name against the stored certificates, and the PEM content when both texts are there.
   */
  async storedProblems(raw: Record<string, unknown>, selfId: number | null = null): Promise<FieldMessages> {
    const out: FieldMessages = {};
    if (typeof raw.name === 'string' && raw.name.trim() && (await this.takenBy(raw.name.trim(), selfId)) !== null)
      out.name = msg('certificate.field.name_taken');
    if (typeof raw.certificate_pem === 'string' && typeof raw.private_key_pem === 'string') {
      const parsed = parseChain(raw.certificate_pem, raw.private_key_pem, this.deps.clock());
      if ('fields' in parsed) Object.assign(out, parsed.fields);
    }
    return out;
  }

  async create(input: CreateCertificateInput, actor?: number): Promise<CertificateView> {
    const chain = await this.check(input.certificate_pem, input.private_key_pem, { name: input.name, selfId: null });
    await this.refuseTakenName(input.name, null);
    const now = this.deps.clock();
    const row = await this.Cert.create({
      name: input.name,
      ...this.chainColumns(chain),
      created_at: now,
      updated_at: now,
    } as CertificateRow);
    const view = this.view(row.get({ plain: true }) as CertificateRow, []);
    await this.deps.events.emit({
      type: 'certificate_created',
      certificate_id: view.id,
      name: view.name,
      subject_names: view.subject_names,
      not_after: view.not_after,
      actor: actor ?? null,
    });
    return view;
  }

  /** The columns an uploaded chain sets, at upload and at renewal (the key sealed; the expiry warning reset). */
  private chainColumns(chain: Awaited<ReturnType<CertificatesService['check']>>) {
    return {
      certificate_pem: chain.pem,
      private_key_enc: this.deps.crypto.seal(chain.keyPem),
      names: JSON.stringify(chain.names),
      issuer: chain.issuer.slice(0, 500),
      not_before: chain.notBefore,
      not_after: chain.notAfter,
      fingerprint_sha256: chain.fingerprint,
      expiry_warned_at: null,
    };
  }

  /** The renewal (a new chain and key), optionally a new name: every route using it must still be covered (422 otherwise). */
  async replace(id: number, input: ReplaceCertificateInput, actor?: number): Promise<CertificateView> {
    const chain = await this.check(input.certificate_pem, input.private_key_pem, input.name === undefined ? undefined : { name: input.name, selfId: id });
    const view = await this.proxy.transact(async (t, changes) => {
      const before = await this.row(id, t);
      const name = input.name ?? before.name;
      if (input.name !== undefined) await this.refuseTakenName(name, id, t);
      const routes = (await this.routesOf([id], t)).get(id) ?? [];
      const lost = routes.filter((r) => !covers(chain.names, r.domain)).map((r) => r.domain);
      if (lost.length)
        throw new AppError('unprocessable', msg('certificate.invalid'), { certificate_pem: msg('certificate.field.still_used', { routes: lost }) });
      const patch = {
        name,
        ...this.chainColumns(chain),
        updated_at: this.deps.clock(),
      };
      await this.Cert.update(patch, { where: { id }, transaction: t });
      if (routes.length) changes.routes(...routes.map((r) => r.id));
      return this.view({ ...before, ...patch }, routes);
    });
    await this.deps.events.emit({
      type: 'certificate_replaced',
      certificate_id: id,
      name: view.name,
      subject_names: view.subject_names,
      not_after: view.not_after,
      actor: actor ?? null,
    });
    return view;
  }

  /** Deletes a certificate no route uses (409 naming the routes otherwise). */
  async remove(id: number, actor?: number): Promise<{ id: number; name: string }> {
    const name = await this.proxy.transact(async (t) => {
      const r = await this.row(id, t);
      const routes = (await this.routesOf([id], t)).get(id) ?? [];
      if (routes.length) {
        throw conflict(
          msg('certificate.in_use', { name: r.name, routes: routes.map((x) => x.domain) }),
          { routes },
          { certificate_id: msg('certificate.in_use', { name: r.name, routes: routes.map((x) => x.domain) }) },
        );
      }
      await this.Cert.destroy({ where: { id }, transaction: t });
      return r.name;
    });
    await this.deps.events.emit({ type: 'certificate_deleted', certificate_id: id, name, actor: actor ?? null });
    return { id, name };
  }

  /**
   * The housekeeping check: every certificate that expires within EXPIRY_WARNING_DAYS and was not
   * warned about since its last upload gets one certificate_expiring event. Returns how many.
   */
  async warnExpiring(): Promise<number> {
    const now = this.deps.clock();
    const rows = await findRows(this.Cert, {
      where: { not_after: { [Op.lt]: now + EXPIRY_WARNING_DAYS * DAY }, expiry_warned_at: { [Op.is]: null } },
      attributes: ['id', 'name', 'not_after'],
    });
    let n = 0;
    for (const r of rows) {
      const [changed] = await this.Cert.update({ expiry_warned_at: now }, { where: { id: r.id, expiry_warned_at: { [Op.is]: null } } });
      if (changed !== 1) continue;
      const routes = (await this.routesOf([Number(r.id)])).get(Number(r.id)) ?? [];
      await this.deps.events.emit({
        type: 'certificate_expiring',
        certificate_id: Number(r.id),
        name: r.name,
        not_after: iso(r.not_after),
        days_left: Math.max(0, this.daysLeft(r.not_after)),
        routes: routes.map((x) => x.domain),
      });
      n++;
    }
    return n;
  }
}

/**
 * The certificates the renderer needs (proxy/snapshot.ts): these ids with their keys opened with the
 * master key, read in `transaction`. A key that does not open leaves its certificate out (the log says so).
 */
export async function loadCustomCertificates(
  deps: Pick<Deps, 'db' | 'crypto' | 'log'>,
  ids: number[],
  transaction?: Transaction,
): Promise<Map<number, CustomCertificate>> {
  const out = new Map<number, CustomCertificate>();
  if (!ids.length) return out;
  const rows = await findRows(deps.db.models.Certificate, {
    where: { id: { [Op.in]: ids } },
    attributes: ['id', 'name', 'certificate_pem', 'private_key_enc', 'names'],
    transaction,
  });
  for (const r of rows) {
    let key: string;
    try {
      key = deps.crypto.open(r.private_key_enc);
    } catch (err) {
      deps.log.error(`certificate ${String(r.id)} (${r.name}): its key does not open: ${(err as Error).message}`);
      continue;
    }
    out.set(Number(r.id), { id: Number(r.id), name: r.name, certificate_pem: r.certificate_pem, private_key_pem: key, names: parseNames(r.names) });
  }
  return out;
}
