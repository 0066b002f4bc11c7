// Checks the links of the documentation: every relative link and image in README.md and docs/**/*.md
// must name a file or directory of the repository, and a link with a #fragment must name a heading
// of the Markdown file it points to (GitHub's anchors: lower case, punctuation dropped, spaces as
// hyphens, a repeated heading numbered -1, -2, ...). Links to other sites are not fetched.
import fs from 'node:fs';
import path from 'node:path';

export interface LinkProblem {
  file: string;
  line: number;
  target: string;
  problem: string;
}

/** The Markdown files the check covers: README.md and every .md under docs/, relative to root. */
export function documentationFiles(root: string): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  if (fs.existsSync(path.join(root, 'docs'))) walk('docs');
  return out.sort();
}

/** The text with fenced code blocks and inline code spans blanked out (line numbers kept). */
function withoutCode(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      if (fenced) return '';
      return line.replace(/(`+)[\s\S]*?\1/g, (m) => ' '.repeat(m.length));
    })
    .join('\n');
}

/** GitHub's anchor of a heading text. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The headings of a Markdown file, in order, with their anchors (numbered when repeated). */
export function headingsOf(text: string): { level: number; text: string; anchor: string }[] {
  const seen = new Map<string, number>();
  const out: { level: number; text: string; anchor: string }[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[2]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.push({ level: m[1].length, text: m[2], anchor: n === 0 ? base : `${base}-${n}` });
  }
  return out;
}

/** Every anchor a Markdown file defines. */
export function anchorsOf(text: string): Set<string> {
  return new Set(headingsOf(text).map((h) => h.anchor));
}

/** Checks every relative link of the given files (paths relative to root). */
export function checkLinks(root: string, files: string[] = documentationFiles(root)): LinkProblem[] {
  const problems: LinkProblem[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsFor = (abs: string) => {
    let a = anchors.get(abs);
    if (!a) anchors.set(abs, (a = anchorsOf(fs.readFileSync(abs, 'utf8'))));
    return a;
  };
  for (const file of files) {
    const abs = path.join(root, file);
    const lines = withoutCode(fs.readFileSync(abs, 'utf8')).split('\n');
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [p, fragment] = target.split('#', 2) as [string, string | undefined];
        const dest = p === '' ? abs : path.resolve(path.dirname(abs), decodeURIComponent(p));
        const at = { file, line: i + 1, target };
        if (!dest.startsWith(root + path.sep) && dest !== root) {
          problems.push({ ...at, problem: 'points outside the repository' });
          continue;
        }
        if (!fs.existsSync(dest)) {
          problems.push({ ...at, problem: 'no such file' });
          continue;
        }
        if (fragment !== undefined) {
          if (!dest.endsWith('.md')) problems.push({ ...at, problem: 'a #fragment on a file that is not Markdown' });
          else if (!anchorsFor(dest).has(fragment)) problems.push({ ...at, problem: `no heading #${fragment} in ${path.relative(root, dest)}` });
        }
      }
    });
  }
  return problems;
}
