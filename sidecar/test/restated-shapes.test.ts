// Every API shape is declared once, as a zod schema, and its type inferred from it. This test finds
// hand-written shapes that look like a schema written out again: an interface (or an object type
// alias) of sidecar/src, sidecar/common/src or the admin app with at least 3 keys, at least 75 % of
// which one zod object schema also has. Each one found is either inferred from its schema
// (z.infer, z.output, an indexed or Omit type of one) or named in KNOWN with the reason it is not an
// API shape. A new one fails the test, and so does an entry of KNOWN that no longer matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const sidecar = path.resolve(import.meta.dirname, '..');
const ROOTS = ['src', 'common/src', 'ui/src'];

const ROW = 'a table row as Sequelize reads it (its view is inferred from the schema and built by toApi/view)';
const FORM = "the admin app's form state, what an input holds while it is edited (strings for lists, '' for unset); its enums are the server's by type";
const INTERNAL = 'an internal shape (a renderer input, a part of a row a function needs, a result no endpoint serves)';

/** The shapes found and judged, by `<file>:<name>` (paths under sidecar/). */
const KNOWN: Record<string, string> = {
  'src/client-api/model.ts:ClientMachineRow': ROW,
  'src/config-links/model.ts:PeerConfigLinkRow': ROW,
  'src/db/models.ts:ActivityRow': ROW,
  'src/db/models.ts:ApiTokenRow': ROW,
  'src/db/models.ts:UserRow': ROW,
  'src/groups/model.ts:PeerGroupRow': ROW,
  'src/oidc/model.ts:OidcProviderRow': ROW,
  'src/rdp/model.ts:RdpRouteRow': ROW,
  'src/rdp/model.ts:RdpSessionRow': ROW,
  'src/redirects/model.ts:RedirectHostRow': ROW,
  'src/routes/model.ts:Route': 'a route as the services and the Caddy renderer read it (typed columns); the API view is routeView, built by toApi',
  'src/routes/model.ts:RouteRow': ROW,
  'src/share-links/model.ts:ShareLinkRow': ROW,
  'src/tags/model.ts:TagRow': ROW,
  'src/webhooks/model.ts:WebhookDeliveryRow': ROW,
  'src/webhooks/model.ts:WebhookRow': ROW,
  'src/route-auth/models.ts:BrandingColumns': ROW,
  'ui/src/screens/backends/values.ts:BackendRow': FORM,
  'ui/src/screens/backends/values.ts:TargetValues': FORM,
  'ui/src/screens/network/NetworkForm.tsx:Values': FORM,
  'ui/src/screens/peers/shared.tsx:FormValues': FORM,
  'ui/src/screens/quotas/quota.tsx:QuotaValue': FORM,
  'ui/src/screens/rdp/RdpForm.tsx:RdpValues': FORM,
  'ui/src/screens/routes/RouteForm.tsx:RouteValues': FORM,
  'ui/src/screens/sso/SsoScreen.tsx:Values': FORM,
  'src/backup/document.ts:OpenedDocument': 'a backup document read back: rows with their secrets open and files as bytes (never served)',
  'src/event-kinds.ts:ActivityEvent': 'what a feature hands the activity log to write (the served entry is activityEntryView)',
  'src/http/platform.ts:VerifiedToken':
    "what token verification gives the HTTP kit; the kit imports nothing from a feature, so it cannot take the auth feature's schema",
  'src/licence/features.ts:Entitlements': 'the licensed features a licence document grants, as the feature gate reads them',
  'src/masterkey/rotation.ts:RotationResult': "the command line's rotation summary (its event payload is declared with the event kinds)",
  'src/gateways/config-cache.ts:OwnedRow': INTERNAL,
  'src/proxy/fragments/protection.ts:ProtectedRoute': INTERNAL,
  'src/proxy/fragments/redirects.ts:RedirectTarget': INTERNAL,
  'src/rdp/rdp-file.ts:RdpProfileSettings': INTERNAL,
  'src/rdp/rules.ts:ModeFields': INTERNAL,
  'src/rdp/sessions.ts:GatewayFields': INTERNAL,
  'src/rdp/sessions.ts:SessionClient': INTERNAL,
  'src/rdp/status.ts:RdpRouteLike': INTERNAL,
  'src/rdp/status.ts:TcpResult': INTERNAL,
  'src/resilience/access-log.ts:HostInfo': INTERNAL,
  'src/route-auth/view.ts:RouteInfo': INTERNAL,
  'src/routes/rules.ts:KindFields': INTERNAL,
  'src/routes/traffic.ts:TargetFields': INTERNAL,
  'src/webhooks/sender.ts:SendResult': INTERNAL,
};

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : files(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const keyOf = (n: ts.PropertyName | undefined): string | null => (n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) ? n.text : null);

interface Shape {
  at: string;
  keys: Set<string>;
}

/** The hand-written object shapes and the zod object schemas of one file. */
function scan(file: string): { shapes: Shape[]; schemas: Shape[] } {
  const text = fs.readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const rel = path.relative(sidecar, file);
  const shapes: Shape[] = [];
  const schemas: Shape[] = [];
  const members = (ms: ts.NodeArray<ts.TypeElement>) => new Set(ms.filter(ts.isPropertySignature).flatMap((m) => keyOf(m.name) ?? []));
  const visit = (n: ts.Node) => {
    if (ts.isInterfaceDeclaration(n)) shapes.push({ at: `${rel}:${n.name.text}`, keys: members(n.members) });
    else if (ts.isTypeAliasDeclaration(n) && ts.isTypeLiteralNode(n.type)) shapes.push({ at: `${rel}:${n.name.text}`, keys: members(n.type.members) });
    else if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      ts.isIdentifier(n.expression.expression) &&
      n.expression.expression.text === 'z' &&
      ['object', 'strictObject', 'looseObject'].includes(n.expression.name.text) &&
      n.arguments[0] &&
      ts.isObjectLiteralExpression(n.arguments[0])
    ) {
      const keys = new Set(
        n.arguments[0].properties.flatMap((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p) ? (keyOf(p.name) ?? []) : [])),
      );
      schemas.push({ at: `${rel}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`, keys });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { shapes, schemas };
}

test('no hand-written shape restates a zod schema: each found is inferred from its schema, or judged in KNOWN with its reason', () => {
  const scanned = ROOTS.flatMap((r) => files(path.join(sidecar, r))).map(scan);
  const schemas = scanned.flatMap((s) => s.schemas);
  const found = new Map<string, string>();
  for (const shape of scanned.flatMap((s) => s.shapes)) {
    if (shape.keys.size < 3) continue;
    for (const schema of schemas) {
      const common = [...shape.keys].filter((k) => schema.keys.has(k)).length;
      if (common >= 3 && common / shape.keys.size >= 0.75) {
        found.set(shape.at, schema.at);
        break;
      }
    }
  }
  const fresh = [...found].filter(([at]) => !(at in KNOWN)).map(([at, schema]) => `${at} (like the schema at ${schema})`);
  assert.deepEqual(fresh, [], 'shapes written out again: infer each from its schema (z.infer/z.output), or judge it in KNOWN with its reason');
  const stale = Object.keys(KNOWN).filter((at) => !found.has(at));
  assert.deepEqual(stale, [], 'entries of KNOWN that no longer match a schema: remove them');
});
