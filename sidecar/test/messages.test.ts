// The message catalogue (@gatehouse/common/messages) covers what the server writes for a person:
// - every message text a request schema gives in its own words (an `error`/`message` property or a
//   refinement's message, read with the TypeScript compiler from every schema of sidecar/src) is
//   known by the catalogue, so a field it refuses carries a code (`field_codes`), not field.unworded;
// - a refused body answers with the code of each field beside its English text;
// - each code's English wording gives the text the server wrote before codes (a stored activity
//   row worded again reads as it was written).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { z } from 'zod';
import { english, msg, MESSAGES, readBack, refOf, type ReadBackCode } from '@gatehouse/common/messages/index.js';
import { knownText } from '../src/http/messages.js';
import { zodFields } from '../src/http/errors.js';
import { createPeerBody } from '../src/peers/schema.js';
import { domainSchema } from '../src/routes/schema.js';
import { gatewayStatusReason, rdpCheckError } from '@gatehouse/common/messages/read-back.js';
import { CaddyAdminError, caddyErrorMessage } from '../src/proxy/admin-client.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const walk = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
const schemaFiles = walk(src).filter((f) => /(^|\/)(schema|fields|names|ops-endpoints)\.ts$/.test(f));

// zod's checks whose last argument may be the message
const CHECKS = new Set([
  'refine',
  'superRefine',
  'min',
  'max',
  'length',
  'int',
  'regex',
  'gte',
  'lte',
  'gt',
  'lt',
  'positive',
  'nonnegative',
  'startsWith',
  'endsWith',
]);

/**
 * The message texts a schema file gives: `error: '...'`, `message: '...'`, `.refine(fn, '...')`,
 * `.min(n, '...')` and the like: literal ones (`texts`), and ones built at run time from a template
 * (`built`: these must be fieldText(code, params), so the code travels).
 */
function schemaTexts(file: string): { texts: string[]; built: string[] } {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const texts: string[] = [];
  const built: string[] = [];
  const take = (e: ts.Expression) => {
    if (ts.isStringLiteralLike(e)) texts.push(e.text);
    else if (ts.isTemplateExpression(e)) built.push(`${e.getText(sf)} (line ${sf.getLineAndCharacterOfPosition(e.getStart()).line + 1})`);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && (n.name.text === 'error' || n.name.text === 'message')) take(n.initializer);
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && CHECKS.has(n.expression.name.text) && n.arguments.length) {
      const last = n.arguments[n.arguments.length - 1];
      if (n.arguments.length > 1 || n.expression.name.text === 'int') take(last);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { texts, built };
}

test('every message a request schema gives in its own words has a code in the catalogue', () => {
  assert.ok(schemaFiles.length >= 10, `${schemaFiles.length} schema files`);
  const unknown: string[] = [];
  const built: string[] = [];
  let n = 0;
  for (const f of schemaFiles) {
    const found = schemaTexts(f);
    for (const text of found.texts) {
      n++;
      if (!knownText(text)) unknown.push(`${relative(src, f)}: "${text}"`);
    }
    built.push(...found.built.map((b) => `${relative(src, f)}: ${b}`));
  }
  assert.ok(n >= 40, `${n} schema messages found`);
  assert.deepEqual(built, [], 'schema messages built from a template: give them as fieldText(code, params)');
  assert.deepEqual(
    unknown,
    [],
    'schema messages without a code: add them to sidecar/common/src/messages (and their German wording to sidecar/ui/src/i18n/messages)',
  );
});

test('a refused body names each field with its code beside the English text', () => {
  const r = createPeerBody.safeParse({ name: '', is_gateway: 'yes', extra: 1 });
  assert.equal(r.success, false);
  const fields = zodFields(r.error!);
  for (const [k, m] of Object.entries(fields)) {
    assert.ok(Object.hasOwn(MESSAGES, m.code), `${k}: ${m.code} is a code of the catalogue`);
    assert.notEqual(m.code, 'field.unworded', `${k}: "${m.text}" has a code`);
    assert.equal(english(m), m.text, `${k}: the code words the same English text`);
  }
  assert.equal(fields.extra.code, 'field.unknown');
});

test('the English wordings give the texts the server wrote before codes', () => {
  assert.equal(msg('peer.created', { name: 'laptop', address: '10.8.0.2' }).text, 'Peer "laptop" created (10.8.0.2)');
  assert.equal(msg('route.up', { domain: 'a.example.com', error: null, status: 200 }).text, 'Route a.example.com is up (HTTP 200)');
  assert.equal(msg('backup.completed', { file: null, target: 'download', bytes: 10 }).text, 'Backup written (download, 10 bytes)');
  assert.equal(
    msg('rdp.session_ended', { session_id: 3, name: 'desk', reason: 'lost', duration_s: 60 }).text,
    'RDP session 3 on "desk" ended (lost) after 60 s',
  );
  assert.equal(
    msg('gateway.status_changed', {
      name: 'home',
      to: 'offline',
      from: 'online',
      reason: { code: 'gateway.status.heartbeat_stale', params: { age_s: 70, offline_after_s: 60 } },
    }).text,
    'Gateway "home" is offline (was online): no heartbeat for 70 s (offline after 60 s)',
  );
  assert.equal(english({ code: 'no.such.code' }), 'no.such.code');
});

test("zod's own messages carry a code worded for a person, with zod's parameters; a missing field is field.required", () => {
  const schema = z.strictObject({
    n: z.number().min(0),
    s: z.string().max(3),
    list: z.array(z.string()).min(1),
    mail: z.email(),
    kind: z.enum(['a', 'b']),
    missing: z.string(),
    flag: z.boolean(),
  });
  const r = schema.safeParse({ n: -1, s: 'abcd', list: [], mail: 'x', kind: 'c', flag: 'yes' });
  assert.equal(r.success, false);
  const f = zodFields(r.error!);
  const seen = Object.fromEntries(Object.entries(f).map(([k, m]) => [k, { code: m.code, params: m.params, text: m.text }]));
  assert.deepEqual(seen, {
    n: { code: 'field.too_small', params: { origin: 'number', unit: null, inclusive: true, exact: false, minimum: '0' }, text: 'must be at least 0' },
    s: {
      code: 'field.too_big',
      params: { origin: 'string', unit: 'characters', inclusive: true, exact: false, maximum: '3' },
      text: 'must have at most 3 characters',
    },
    list: {
      code: 'field.too_small',
      params: { origin: 'array', unit: 'items', inclusive: true, exact: false, minimum: '1' },
      text: 'must have at least 1 item',
    },
    mail: { code: 'field.invalid_format', params: { format: 'email' }, text: 'must be a valid email address' },
    kind: { code: 'field.invalid_option', params: { values: ['"a"', '"b"'] }, text: 'must be one of "a", "b"' },
    missing: { code: 'field.required', params: undefined, text: 'required' },
    flag: { code: 'field.invalid_type', params: { expected: 'boolean', received: 'string' }, text: 'must be true or false (received text)' },
  });
});

test('a limit, an allowed list or a refused value built into a schema message travels as parameters', () => {
  assert.deepEqual(refOf(knownText('at most 1000 ids')!), { code: 'field.max_ids', params: { max: 1000 } });
  assert.deepEqual(refOf(knownText('at most 64 characters')!), { code: 'field.max_chars', params: { max: 64 } });
  const d = domainSchema.safeParse('a.b_c.example.com');
  assert.deepEqual(refOf(zodFields(d.error!)._), { code: 'route.field.invalid_label', params: { label: 'b_c' } });
});

test("a stored text of another party's answer is read back as its coded category, the party's own words as detail", () => {
  const codes: ReadBackCode[] = [
    { code: 'webhook.delivery.status', params: { status: 'number' } },
    { code: 'webhook.delivery.dns', params: { detail: 'text' } },
    { code: 'webhook.delivery.not_allowed' },
  ];
  assert.deepEqual(readBack('HTTP 503', codes, 'webhook.delivery.network'), { code: 'webhook.delivery.status', params: { status: 503 } });
  assert.deepEqual(readBack('DNS: ENOTFOUND hooks.example.com', codes, 'webhook.delivery.network'), {
    code: 'webhook.delivery.dns',
    params: { detail: 'ENOTFOUND hooks.example.com' },
  });
  assert.deepEqual(readBack('not allowed', codes, 'webhook.delivery.network'), { code: 'webhook.delivery.not_allowed' });
  assert.deepEqual(readBack('socket hang up', codes, 'webhook.delivery.network'), { code: 'webhook.delivery.network', params: { detail: 'socket hang up' } });
  // each category's English text reads back as itself
  const status = msg('licence.service.status_detail', { status: 502, detail: 'bad gateway: try later' });
  assert.deepEqual(
    readBack(status.text, [{ code: 'licence.service.status_detail', params: { status: 'number', detail: 'text' } }], 'licence.service.other'),
    refOf(status),
  );
});

test("an RDP check's stored error reads back as rdp.check.paths, each path's reason as its code", () => {
  const stored = msg('rdp.check.paths', {
    paths: [
      { path: 'internal', reason: { code: 'rdp.check.refused' } },
      { path: 'external', reason: { code: 'rdp.check.timeout', params: { ms: 300 } } },
      { path: 'gateway', reason: { code: 'rdp.check.network', params: { detail: 'EHOSTDOWN' } } },
    ],
  });
  assert.equal(stored.text, 'internal: connection refused; external: no answer within 300 ms; gateway: EHOSTDOWN');
  assert.deepEqual(rdpCheckError(stored.text), refOf(stored));
  assert.deepEqual(rdpCheckError('not checked'), { code: 'rdp.check.not_checked' });
  assert.deepEqual(rdpCheckError('something: else'), { code: 'rdp.check.network', params: { detail: 'something: else' } });
  assert.equal(rdpCheckError(null), null);
});

test("a gateway's stored status reason reads back as its gateway.status.* code; one no code words is gateway.status.not_recorded", () => {
  for (const m of [
    msg('gateway.status.no_tokens'),
    msg('gateway.status.no_heartbeat'),
    msg('gateway.status.heartbeat_stale', { age_s: 95, offline_after_s: 90 }),
    msg('gateway.status.unhealthy', { health: null }),
    msg('gateway.status.unhealthy', { health: { code: 'gateway.health.lan_unreachable', params: { total: 2 } } }),
    msg('gateway.status.healthy', { health: null }),
    msg('gateway.status.healthy', { health: { code: 'gateway.health.lan_reachable', params: { up: 1, total: 2 } } }),
  ])
    assert.deepEqual(gatewayStatusReason(m.text), refOf(m), m.text);
  assert.deepEqual(gatewayStatusReason('heartbeat received, but the LAN is on fire'), {
    code: 'gateway.status.unhealthy',
    params: { health: { code: 'gateway.health.reported', params: { detail: 'the LAN is on fire' } } },
  });
  assert.deepEqual(gatewayStatusReason('manual override'), { code: 'gateway.status.not_recorded', params: { detail: 'manual override' } });
});

test("a failed Caddy load is a coded category with the error's own text as detail", () => {
  assert.deepEqual(refOf(caddyErrorMessage(new CaddyAdminError('loading config: listen tcp :8443: bind: address already in use', 400))), {
    code: 'caddy.error.rejected',
    params: { status: 400, detail: 'loading config: listen tcp :8443: bind: address already in use' },
  });
  assert.deepEqual(refOf(caddyErrorMessage(new CaddyAdminError('Caddy admin API at 127.0.0.1:2019 is not reachable (ECONNREFUSED)'))), {
    code: 'caddy.error.unreachable',
    params: { detail: 'Caddy admin API at 127.0.0.1:2019 is not reachable (ECONNREFUSED)' },
  });
  assert.deepEqual(refOf(caddyErrorMessage(new CaddyAdminError('Caddy admin API at 127.0.0.1:2019 is not reachable (timeout after 60000 ms)'))), {
    code: 'caddy.error.timeout',
    params: { ms: 60000, detail: 'Caddy admin API at 127.0.0.1:2019 is not reachable (timeout after 60000 ms)' },
  });
  assert.deepEqual(refOf(caddyErrorMessage(new Error('boom'))), { code: 'caddy.error.other', params: { detail: 'boom' } });
});
