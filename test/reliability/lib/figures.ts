// The reliability suite's figures: each test records what it measured, and
// scripts/test-reliability.sh prints them as one table after the run.
// A figure is a line of JSON in test-results/reliability-figures.jsonl (appended, so tests in
// separate processes add to the same file); the runner empties the file before the run.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const FIGURES_FILE = process.env.RELIABILITY_FIGURES ?? resolve(root, 'test-results/reliability-figures.jsonl');

export interface Figure {
  /** the case, e.g. "Caddy SIGKILL under traffic" */
  test: string;
  /** what was measured, e.g. "config served again after restart" */
  figure: string;
  /** the value with its unit, e.g. "640 ms" */
  value: string;
  /** the target, e.g. "< 2 s" (empty when there is none) */
  target?: string;
  /** whether the value meets the target (undefined when there is no target) */
  ok?: boolean;
}

export function recordFigure(f: Figure): void {
  mkdirSync(dirname(FIGURES_FILE), { recursive: true });
  appendFileSync(FIGURES_FILE, JSON.stringify({ ...f, at: new Date().toISOString() }) + '\n');
  console.log(
    `# figure: ${f.test} | ${f.figure} | ${f.value}${f.target ? ` (target ${f.target}${f.ok === undefined ? '' : f.ok ? ', met' : ', NOT met'})` : ''}`,
  );
}
