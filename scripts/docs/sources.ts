// Where each generated part of the reference reads its facts: one function per part, so that when
// the code holding them moves (one descriptor per event kind replacing the parallel tables, message
// codes beside the error kinds), only the function here is re-pointed.
import path from 'node:path';
import ts from 'typescript';
import { configVariables } from '../../sidecar/src/config.js';
import { STREAMED, type StreamScope } from '../../sidecar/src/events-stream/catalog.js';
import { ERROR_KINDS } from '../../sidecar/src/http/errors.js';
import { SERIES } from '../../sidecar/src/metrics/service.js';
import { WEBHOOK_EVENT_INFO, isWebhookEvent } from '../../sidecar/src/webhooks/events.js';

const root = path.resolve(import.meta.dirname, '..', '..');

/** The source files each part is generated from (named in the generated text). */
export const SOURCES = {
  environment: ['sidecar/src/config.ts'],
  events: ['sidecar/src/events.ts', 'sidecar/src/events-stream/catalog.ts', 'sidecar/src/webhooks/events.ts'],
  metrics: ['sidecar/src/metrics/service.ts'],
  errors: ['sidecar/src/http/errors.ts'],
} as const;

export interface EnvironmentVariable {
  name: string;
  /** Markdown; null when unset by default */
  default: string | null;
  meaning: string;
  /** a page of docs/, relative to docs/ */
  see?: string;
}

/** Every environment variable of the sidecar: the config schema and its documentation. */
export function environmentVariables(): EnvironmentVariable[] {
  return configVariables();
}

export interface EventKind {
  name: string;
  /** who receives it on the live stream; null: not streamed */
  scope: StreamScope | null;
  /** the payload's fields, with notes where the catalogue has them */
  payload: string;
  /** what it means, for the kinds a webhook can subscribe to; null: webhooks do not carry it */
  webhook: string | null;
}

/** Every event kind of the bus: its stream scope, payload and webhook eligibility. */
export function eventKinds(): EventKind[] {
  const fields = eventFieldsFromTypes();
  return (Object.keys(STREAMED) as (keyof typeof STREAMED)[]).map((name) => {
    const streamed = STREAMED[name];
    return {
      name,
      scope: streamed?.scope ?? null,
      payload: streamed?.fields ?? (fields.get(name) ?? []).join(', '),
      webhook: isWebhookEvent(name) ? WEBHOOK_EVENT_INFO[name] : null,
    };
  });
}

/**
 * The fields of each member of the DomainEvent union in sidecar/src/events.ts, read with the
 * TypeScript compiler (for the events the stream catalogue does not describe): event name → fields
 * besides `type`.
 */
function eventFieldsFromTypes(): Map<string, string[]> {
  const file = path.join(root, 'sidecar/src/events.ts');
  const program = ts.createProgram([file], { noResolve: true, noLib: true, skipLibCheck: true, strict: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const alias = source.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'DomainEvent');
  if (!alias) throw new Error('sidecar/src/events.ts declares no DomainEvent union');
  const out = new Map<string, string[]>();
  const union = checker.getTypeAtLocation(alias.name);
  for (const member of union.isUnion() ? union.types : [union]) {
    const typeProp = member.getProperty('type');
    if (!typeProp) continue;
    const typeOfType = checker.getTypeOfSymbol(typeProp);
    const names = (typeOfType.isUnion() ? typeOfType.types : [typeOfType]).filter((t) => t.isStringLiteral()).map((t) => (t as ts.StringLiteralType).value);
    const props = member.getProperties().map((p) => p.name).filter((n) => n !== 'type');
    for (const n of names) out.set(n, [...new Set([...(out.get(n) ?? []), ...props])]);
  }
  return out;
}

export interface MetricSeries {
  name: string;
  type: string;
  labels: Readonly<Record<string, string>>;
  help: string;
}

/** Every series of GET /metrics the metrics service declares. */
export function metricSeries(): MetricSeries[] {
  return SERIES.map((s) => ({ name: s.name, type: s.type, labels: s.labels, help: s.help }));
}

export interface ErrorKindDoc {
  kind: string;
  status: number;
  meaning: string;
}

/** The kinds of domain error and their statuses (the error middleware's table). */
export function errorKinds(): ErrorKindDoc[] {
  return Object.entries(ERROR_KINDS).map(([kind, v]) => ({ kind, status: v.status, meaning: v.meaning })).sort((a, b) => a.status - b.status);
}
