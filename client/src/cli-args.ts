// Command-line parsing (pure): `gatehouse-client <command> [sub] [args] [--flag value | --flag=value | --switch] [-- extra]`.
// Flags may come anywhere; everything after `--` is kept apart (extra xfreerdp arguments).
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
  rest: string[];
}

export class UsageError extends Error {}

/** Flags that take no value. */
export const SWITCHES = new Set(['json', 'userspace', 'no-tunnel', 'no-launch', 'refresh', 'help', 'version']);

export function parseArgs(argv: string[], valued: Set<string>): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (k: string, v: string) => flags.set(k, [...(flags.get(k) ?? []), v]);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') return { positional, flags, rest: argv.slice(i + 1) };
    if (a === '-h') {
      add('help', 'true');
      continue;
    }
    if (!a.startsWith('--') || a === '--') {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (SWITCHES.has(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      add(name, 'true');
    } else if (valued.has(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value`);
      add(name, v);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positional, flags, rest: [] };
}

/** The flag's last value, else the environment variable, else undefined. */
export function opt(p: ParsedArgs, name: string, env?: string, processEnv: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = p.flags.get(name);
  if (v?.length) return v[v.length - 1];
  const e = env ? processEnv[env] : undefined;
  return e === undefined || e === '' ? undefined : e;
}

export function has(p: ParsedArgs, name: string): boolean {
  return p.flags.has(name);
}

/** A positive number of seconds (as ms). */
export function seconds(p: ParsedArgs, name: string, env: string, dflt: number, processEnv: NodeJS.ProcessEnv = process.env): number {
  const v = opt(p, name, env, processEnv);
  if (v === undefined) return dflt * 1000;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400) throw new UsageError(`--${name} (${env}): must be a number of seconds, more than 0 and at most 86400`);
  return Math.round(n * 1000);
}
