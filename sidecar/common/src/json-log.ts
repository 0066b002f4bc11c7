// JSON-lines logging to stdout (errors to stderr): one object per line with time, level and msg.
// Used by the gateway companion and the desktop client (the sidecar has its own logger).
export type Level = 'error' | 'warn' | 'info' | 'debug';
const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
  info(msg: string, meta?: Record<string, unknown>): void;
  debug(msg: string, meta?: Record<string, unknown>): void;
}

export function createLogger(level: Level = 'info', write: (line: string, level: Level) => void = defaultWrite): Logger {
  const emit = (l: Level) => (msg: string, meta?: Record<string, unknown>) => {
    if (ORDER[l] > ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: l, msg, ...(meta ?? {}) }), l);
  };
  return { error: emit('error'), warn: emit('warn'), info: emit('info'), debug: emit('debug') };
}

function defaultWrite(line: string, level: Level): void {
  (level === 'error' ? process.stderr : process.stdout).write(line + '\n');
}
