// Where each generated part of the reference reads its facts: one function per part, so that when
// the code holding them moves (one descriptor per event kind replacing the parallel tables, message
// codes beside the error kinds), only the function here is re-pointed.
import { configVariables } from '../../sidecar/src/config.js';
import { EVENT_KINDS, EVENT_TYPES, payloadFields, type StreamScope } from '../../sidecar/src/event-kinds.js';
import { ERROR_KINDS } from '../../sidecar/src/http/errors.js';
import { SERIES } from '../../sidecar/src/metrics/service.js';

/** The source files each part is generated from (named in the generated text). */
export const SOURCES = {
  environment: ['sidecar/src/config.ts'],
  events: ['sidecar/src/event-kinds.ts'],
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
  return Object.entries(ERROR_KINDS).map(([kind, v]) => ({ kind, status: v.status, meaning: v.meaning })).sort((a, b) => a.status - b.status);
}
