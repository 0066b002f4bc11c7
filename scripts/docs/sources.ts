// Where each generated part of the reference reads its facts: one function per part, so that when
// the code holding them moves (one descriptor per event kind replacing the parallel tables, message
// codes beside the error kinds), only the function here is re-pointed.
import { configVariables } from '../../sidecar/src/config.js';
import { EVENT_KINDS, EVENT_TYPES, payloadFields, type StreamScope } from '../../sidecar/src/event-kinds.js';
import { ERROR_KINDS } from '../../sidecar/src/http/errors.js';
import { SERIES } from '../../sidecar/src/metrics/service.js';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { AREAS } from '../../sidecar/common/src/messages/index.js';

/** The source files each part is generated from (named in the generated text). */
export const SOURCES = {
  environment: ['sidecar/src/config.ts'],
  events: ['sidecar/src/event-kinds.ts'],
  metrics: ['sidecar/src/metrics/service.ts'],
  errors: ['sidecar/src/http/errors.ts'],
  messages: ['sidecar/common/src/messages/'],
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

/** Every event kind of the bus, from its descriptor: its stream scope, payload and webhook eligibility. */
export function eventKinds(): EventKind[] {
  return EVENT_TYPES.map((name) => ({
    name,
    scope: EVENT_KINDS[name].scope,
    payload: payloadFields(name),
    webhook: (EVENT_KINDS[name] as { webhook?: string }).webhook ?? null,
  }));
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
  return Object.entries(ERROR_KINDS)
    .map(([kind, v]) => ({ kind, status: v.status, meaning: v.meaning }))
    .sort((a, b) => a.status - b.status);
}

export interface MessageCodeDoc {
  area: string;
  code: string;
  /** the parameters as the English wording declares them (name: type), empty when none */
  params: string[];
  /** the English wording: its text, with {name} for a parameter and {…} for a worded choice */
  english: string;
}

const MESSAGES_DIR = path.resolve(import.meta.dirname, '..', '..', 'sidecar', 'common', 'src', 'messages');

/** The English wording's text as a template: `${p.name}` becomes {name}, other expressions {…}. */
function wordingText(body: ts.Node, sf: ts.SourceFile): string {
  if (ts.isStringLiteral(body) || ts.isNoSubstitutionTemplateLiteral(body)) return body.text;
  if (ts.isTemplateExpression(body)) {
    let out = body.head.text;
    for (const span of body.templateSpans) {
      const e = span.expression;
      out += ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'p' ? `{${e.name.text}}` : '{…}';
      out += span.literal.text;
    }
    return out;
  }
  if (ts.isPropertyAccessExpression(body) && ts.isIdentifier(body.expression) && body.expression.text === 'p') return `{${body.name.text}}`;
  return `{${body.getText(sf).replace(/\s+/g, ' ').slice(0, 80)}}`;
}

/** Every message code of the catalogue (sidecar/common/src/messages), by area, read with the TypeScript compiler. */
export function messageCodes(): MessageCodeDoc[] {
  const out: MessageCodeDoc[] = [];
  for (const [area, catalogue] of Object.entries(AREAS)) {
    const sf = ts.createSourceFile(`${area}.ts`, fs.readFileSync(path.join(MESSAGES_DIR, `${area}.ts`), 'utf8'), ts.ScriptTarget.Latest, true);
    const found = new Map<string, MessageCodeDoc>();
    const visit = (n: ts.Node): void => {
      if (ts.isPropertyAssignment(n) && ts.isStringLiteral(n.name) && ts.isArrowFunction(n.initializer)) {
        const fn = n.initializer;
        const first = fn.parameters[0];
        const params: string[] = [];
        if (first?.type && ts.isTypeLiteralNode(first.type)) {
          for (const m of first.type.members)
            if (ts.isPropertySignature(m) && m.name) params.push(`${m.name.getText(sf)}: ${m.type?.getText(sf) ?? 'unknown'}`);
        } else if (first?.type) params.push(first.type.getText(sf));
        const body = ts.isParenthesizedExpression(fn.body) ? fn.body.expression : fn.body;
        found.set(n.name.text, { area, code: n.name.text, params, english: ts.isBlock(body) ? '…' : wordingText(body, sf) });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    for (const code of Object.keys(catalogue)) {
      const doc = found.get(code);
      if (!doc) throw new Error(`messages/${area}.ts: code ${code} not found in the source`);
      out.push(doc);
    }
  }
  return out;
}
