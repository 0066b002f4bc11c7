// The generated parts of the reference pages: each is a block of a Markdown file between
//   <!-- BEGIN GENERATED <name> ... -->  and  <!-- END GENERATED <name> -->
// written from the code that holds its facts (sources.ts). `npm run docs` rewrites them
// (generate.ts); sidecar/test/docs-reference.test.ts fails when a committed block differs from what
// the code gives now. The text around the blocks is written by hand.
import fs from 'node:fs';
import path from 'node:path';
import { headingsOf } from './links.js';
import { SOURCES, environmentVariables, errorKinds, eventKinds, messageCodes, metricSeries } from './sources.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface GeneratedPart {
  /** the Markdown file, relative to the repository root */
  file: string;
  /** the block's name in its markers */
  name: string;
  /** the source files named in the marker */
  sources: readonly string[];
  /** the block's content, from the code */
  render(): string;
}

/** A table cell: pipes escaped, line breaks folded. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (s: string) => `\`${s}\``;

/** A link from a page of docs/reference/ to `see` (relative to docs/), named by the heading it points at. */
function seeLink(see: string): string {
  const [file, anchor] = see.split('#');
  const text = fs.readFileSync(path.join(ROOT, 'docs', file), 'utf8');
  const headings = headingsOf(text);
  const h = anchor ? headings.find((x) => x.anchor === anchor) : headings.find((x) => x.level === 1);
  if (!h) throw new Error(`docs/${see}: no such heading`);
  return `[${h.text.replace(/`/g, '')}](${path.posix.relative('reference', file)}${anchor ? `#${anchor}` : ''})`;
}

function renderEnvironment(): string {
  const rows = environmentVariables().map(
    (v) => `| ${code(v.name)} | ${cell(v.default ?? 'unset')} | ${cell(v.meaning)}${v.see ? ` (${seeLink(v.see)})` : ''} |`,
  );
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

function renderEvents(): string {
  const rows = eventKinds().map((e) => {
    const scope = e.scope === null ? 'not streamed' : e.scope === 'admin' ? '*admin*' : e.scope;
    return `| ${code(e.name)} | ${scope} | ${e.webhook === null ? '—' : 'yes'} | ${cell(e.payload)} |`;
  });
  return ['| Event | Stream scope | Webhooks | Payload |', '|---|---|---|---|', ...rows].join('\n');
}

function renderWebhookKinds(): string {
  return eventKinds()
    .filter((e) => e.webhook !== null)
    .map((e) => `- ${code(e.name)}: ${e.webhook}`)
    .join('\n');
}

function renderMetrics(): string {
  const rows = metricSeries().map((m) => {
    const labels = Object.entries(m.labels).map(([l, values]) => (values ? `${code(l)} (${values})` : code(l)));
    return `| ${code(m.name)} | ${m.type} | ${cell(labels.join(', '))} | ${cell(m.help)} |`;
  });
  return ['| Name | Type | Labels | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function renderErrors(): string {
  const rows = errorKinds().map((k) => `| ${k.status} | ${code(k.kind)} | ${cell(k.meaning)} |`);
  return ['| Status | Kind | Meaning |', '|---|---|---|', ...rows].join('\n');
}

function renderMessageCodes(): string {
  const out: string[] = [];
  let area = '';
  for (const m of messageCodes()) {
    if (m.area !== area) {
      if (area) out.push('');
      area = m.area;
      out.push(`### ${area}`, '', '| Code | Parameters | English text |', '|---|---|---|');
    }
    out.push(`| ${code(m.code)} | ${cell(m.params.map(code).join(', ') || '—')} | ${cell(m.english)} |`);
  }
  return out.join('\n');
}

export const PARTS: GeneratedPart[] = [
  { file: 'docs/reference/environment.md', name: 'environment', sources: SOURCES.environment, render: renderEnvironment },
  { file: 'docs/reference/events.md', name: 'events', sources: SOURCES.events, render: renderEvents },
  { file: 'docs/reference/events.md', name: 'webhook-kinds', sources: SOURCES.events, render: renderWebhookKinds },
  { file: 'docs/reference/metrics.md', name: 'metrics', sources: SOURCES.metrics, render: renderMetrics },
  { file: 'docs/reference/errors.md', name: 'errors', sources: SOURCES.errors, render: renderErrors },
  { file: 'docs/reference/errors.md', name: 'message-codes', sources: SOURCES.messages, render: renderMessageCodes },
];

const begin = (p: GeneratedPart) => `<!-- BEGIN GENERATED ${p.name}: written by npm run docs from ${p.sources.join(', ')}; edit the code, not this part -->`;
const end = (p: GeneratedPart) => `<!-- END GENERATED ${p.name} -->`;

/** The part's block as the file holds it now (between its markers), or null without markers. */
export function committedBlock(text: string, p: GeneratedPart): string | null {
  const b = text.indexOf(`<!-- BEGIN GENERATED ${p.name}:`);
  const e = text.indexOf(end(p));
  if (b < 0 || e < b) return null;
  return text.slice(text.indexOf('\n', b) + 1, e).replace(/\n$/, '');
}

/** The file's text with the part's block (markers included) replaced by what the code gives now. */
export function withBlock(text: string, p: GeneratedPart, body = p.render()): string {
  const b = text.indexOf(`<!-- BEGIN GENERATED ${p.name}:`);
  const e = text.indexOf(end(p));
  if (b < 0 || e < b) throw new Error(`${p.file}: no markers for the generated part "${p.name}" (add ${begin(p)} and ${end(p)})`);
  return text.slice(0, b) + `${begin(p)}\n${body}\n${end(p)}` + text.slice(e + end(p).length);
}

/** Every part whose committed block (or its marker line) differs from what the code gives now. */
export function driftedParts(): { part: GeneratedPart; committed: string | null; generated: string }[] {
  const out: { part: GeneratedPart; committed: string | null; generated: string }[] = [];
  for (const p of PARTS) {
    const text = fs.readFileSync(path.join(ROOT, p.file), 'utf8');
    const generated = p.render();
    if (withBlock(text, p, generated) !== text) out.push({ part: p, committed: committedBlock(text, p), generated });
  }
  return out;
}
