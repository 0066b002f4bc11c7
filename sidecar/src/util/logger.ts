// winston, JSON lines on stdout.
import winston from 'winston';

export type Logger = winston.Logger;

export function createLogger(level: string = 'info', silent = false): Logger {
  return winston.createLogger({
    level,
    silent,
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    defaultMeta: { service: 'gatehouse' },
    transports: [new winston.transports.Console()],
  });
}
