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
import { english, msg, MESSAGES } from '@gatehouse/common/messages/index.js';
import { knownText } from '../src/http/messages.js';
import { zodFields } from '../src/http/errors.js';
import { createPeerBody } from '../src/peers/schema.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const walk = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
const schemaFiles = walk(src).filter((f) => /(^|\/)(schema|fields)\.ts$/.test(f));

/** The literal message texts a schema file gives: `error: '...'`, `message: '...'`, `.refine(fn, '...')`. */
function schemaTexts(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (
      ts.isPropertyAssignment(n) &&
      ts.isIdentifier(n.name) &&
      (n.name.text === 'error' || n.name.text === 'message') &&
      ts.isStringLiteralLike(n.initializer)
    )
      out.push(n.initializer.text);
    if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      ['refine', 'superRefine'].includes(n.expression.name.text) &&
      n.arguments[1] &&
      ts.isStringLiteralLike(n.arguments[1])
    )
      out.push(n.arguments[1].text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

test('every message a request schema gives in its own words has a code in the catalogue', () => {
  assert.ok(schemaFiles.length >= 10, `${schemaFiles.length} schema files`);
  const unknown: string[] = [];
  let n = 0;
  for (const f of schemaFiles) {
    for (const text of schemaTexts(f)) {
      n++;
      if (!knownText(text)) unknown.push(`${relative(src, f)}: "${text}"`);
    }
  }
  assert.ok(n >= 40, `${n} schema messages found`);
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
