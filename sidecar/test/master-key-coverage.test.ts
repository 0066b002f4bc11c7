// One list of sealed columns: the backup registry (backup/sections.ts) is what the master-key rotation
// re-seals (masterkey/sealed.ts). A column whose name says it holds a secret (…_enc, …_sealed,
// …secret…, …private_key…, …passphrase…, …password…, …token_hash…) must be declared there as a secret
// (`master`: sealed with the master key, re-sealed by a rotation; `hash`: one-way) or be named below
// with the reason it is neither; a table the backup excludes must not hold such a column unless listed.
// (master-key-rotation.test.ts checks the values: after a rotation none opens with the old key.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { startTestServer, type TestServer } from './lib/server.js';
import { EXCLUDED_TABLES, SECTIONS } from '../src/backup/sections.js';
import { sealedSections } from '../src/masterkey/sealed.js';

const SECRET_LOOKING = /(_enc$|_sealed$|secret|private_key|passphrase|password|token_hash|_hash$)/i;

/** table.column -> why it is not a declared secret although its name looks like one */
const NOT_SECRETS: Record<string, string> = {
  'users.must_change_password': 'a flag',
  'oidc_providers.allow_password_for_sso_users': 'a flag (whether accounts linked to the provider may also sign in with a password)',
  'route_auth_codes.code_hash':
    'HMAC of a one-time e-mail code under a key derived from the master key; the codes expire within minutes and a rotation leaves pending ones invalid (README)',
  'gateways.reported_config_hash': 'hash of the configuration a gateway last reported (not a secret)',
  'cluster_nodes.config_hash': 'hash of the proxy configuration a cluster node runs (compared between nodes; not a secret)',
  'peer_config_links.token_hash': 'SHA-256 of a one-time link token of 256 random bits: not reversible, and the table is left out of backups',
  'route_auth_oidc_flows.verifier_enc':
    "an OIDC sign-in's PKCE verifier, sealed under a key derived from the master key (not the master key itself) and transient: the table is left out of backups, its rows expire within 10 minutes, and a rotation leaves the sign-ins in progress unopenable (the visitor starts again; route-auth/oidc.ts)",
  'route_auth_oidc_flows.binding_hash': "SHA-256 of a sign-in's binding cookie of 256 random bits: not reversible, and the table is left out of backups",
};

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

async function tablesAndColumns(): Promise<Map<string, string[]>> {
  const qi = s.deps.db.sequelize.getQueryInterface();
  const all = (await qi.showAllTables()) as unknown[];
  const names = [...new Set(all.map((t) => (typeof t === 'string' ? t : String((t as { tableName: string }).tableName))))];
  const out = new Map<string, string[]>();
  for (const t of names) {
    if (t === 'sqlite_sequence' || t === 'SequelizeMeta') continue;
    const cols =
      s.deps.db.dialect === 'sqlite'
        ? (await s.deps.db.sequelize.query<{ name: string }>(`PRAGMA table_info("${t}")`, { type: QueryTypes.SELECT })).map((r) => r.name)
        : Object.keys(await qi.describeTable(t));
    out.set(t, cols);
  }
  return out;
}

test('every secret-looking column is a declared secret of its backup section, or named with a reason', async () => {
  const undeclared: string[] = [];
  for (const [table, cols] of await tablesAndColumns()) {
    const section = SECTIONS.find((x) => x.table === table);
    for (const col of cols) {
      if (!SECRET_LOOKING.test(col)) continue;
      const where = `${table}.${col}`;
      if (section?.secrets?.[col]) continue;
      if (where in NOT_SECRETS) continue;
      undeclared.push(where + (section ? '' : table in EXCLUDED_TABLES ? ' (table excluded from the backup)' : ' (table in no section)'));
    }
  }
  assert.deepEqual(
    undeclared,
    [],
    `declare these in backup/sections.ts \`secrets\` (master or hash), or add them to NOT_SECRETS with the reason: ${undeclared.join(', ')}`,
  );
  const all = await tablesAndColumns();
  for (const [where, why] of Object.entries(NOT_SECRETS)) {
    assert.ok(why.length > 5, `${where}: a reason`);
    const [t, c] = where.split('.');
    assert.ok(all.get(t!)?.includes(c!), `NOT_SECRETS: ${where} exists (no stale entries)`);
  }
});

test('the rotation re-seals the sections that hold master-sealed secrets (and the settings JSON values)', () => {
  const names = sealedSections()
    .map((x) => x.name)
    .sort();
  for (const n of ['peers', 'settings', 'gateways', 'route_auth', 'route_auth_user_totp', 'webhooks', 'backup_jobs'])
    assert.ok(names.includes(n), `${n} is re-sealed`);
});
