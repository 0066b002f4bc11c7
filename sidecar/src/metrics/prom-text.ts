// A reader of the Prometheus text exposition format (version 0.0.4), for the samples Caddy's admin
// API serves at /metrics. Pure: text in, samples out. Comment lines (# HELP, # TYPE) are skipped;
// label values are unescaped (\\, \", \n); a sample's optional timestamp is ignored.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  return Number(s);
}

/** The samples of a text exposition whose metric name passes `want` (all when omitted). Malformed lines are skipped. */
export function parsePromText(text: string, want?: (name: string) => boolean): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    let i = 0;
    while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
    const name = line.slice(0, i);
    if (!name || (want && !want(name))) continue;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      let ok = true;
      for (;;) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          break;
        }
        const eq = line.indexOf('=', i);
        if (eq === -1 || line[eq + 1] !== '"') {
          ok = false;
          break;
        }
        const key = line.slice(i, eq).trim();
        let j = eq + 2;
        let v = '';
        while (j < line.length && line[j] !== '"') {
          if (line[j] === '\\' && j + 1 < line.length) {
            const c = line[j + 1];
            v += c === 'n' ? '\n' : c;
            j += 2;
          } else {
            v += line[j++];
          }
        }
        if (j >= line.length) {
          ok = false;
          break;
        }
        labels[key] = v;
        i = j + 1;
      }
      if (!ok) continue;
    }
    const rest = line.slice(i).trim().split(/\s+/);
    const value = parseValue(rest[0] ?? '');
    if (rest[0] === undefined || rest[0] === '' || Number.isNaN(value)) continue;
    out.push({ name, labels, value });
  }
  return out;
}
