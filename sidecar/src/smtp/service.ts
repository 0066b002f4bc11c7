// SMTP settings and the Mailer every feature sends mail through (route-auth email codes, test
// mails, later notifications). Settings live in the settings table under key "smtp"; the password
// is sealed with the master key and never returned (only `password_set`).
import { msg } from '@gatehouse/common/messages/index.js';
import type { SettingsStore } from '../settings/store.js';
import type { MasterKey } from '../util/crypto.js';
import type { ActivityLog } from '../logs/activity.js';
import type { EventBus } from '../events.js';
import { AppError } from '../util/errors.js';
import type { SmtpInput, SmtpView } from './schema.js';

export const SMTP_SETTING_KEY = 'smtp';

/** The settings as stored: every field of the body set, the password sealed. */
type StoredSmtp = Required<SmtpInput>;

export interface SentMail {
  messageId: string;
  accepted: string[];
}

/** What other features use to send mail. */
export interface Mailer {
  /** Whether SMTP settings exist (features that need mail refuse to be configured without them). */
  configured(): Promise<boolean>;
  send(to: string, subject: string, text: string, html?: string): Promise<SentMail>;
}

export class SmtpService implements Mailer {
  constructor(
    private settings: SettingsStore,
    private crypto: MasterKey,
    private activity: ActivityLog,
    private events: EventBus,
  ) {}

  private async stored(): Promise<StoredSmtp | null> {
    const v = await this.settings.get<StoredSmtp | null>(SMTP_SETTING_KEY, null);
    return v && typeof v === 'object' && typeof v.host === 'string' && v.host ? v : null;
  }

  async get(): Promise<SmtpView> {
    const s = await this.stored();
    if (!s) return { configured: false, host: null, port: null, secure: false, user: null, password_set: false, from: null };
    return { configured: true, host: s.host, port: s.port, secure: s.secure, user: s.user, password_set: !!s.password, from: s.from };
  }

  async configured(): Promise<boolean> {
    return (await this.stored()) !== null;
  }

  async put(input: SmtpInput, actor?: number): Promise<SmtpView> {
    const old = await this.stored();
    let password = old?.password ?? null;
    if (input.password === null) password = null;
    else if (typeof input.password === 'string' && input.password !== '') password = this.crypto.seal(input.password);
    const next: StoredSmtp = { host: input.host, port: input.port, secure: input.secure, user: input.user ?? null, password, from: input.from };
    await this.settings.set(SMTP_SETTING_KEY, next);
    await this.events.emit({
      type: 'smtp_updated',
      host: input.host,
      port: input.port,
      secure: input.secure,
      user: next.user,
      password_changed: password !== (old?.password ?? null),
      actor: actor ?? null,
    });
    return this.get();
  }

  private async transport(s: StoredSmtp) {
    const pass = s.password ? this.crypto.open(s.password) : undefined;
    const { default: nodemailer } = await import('nodemailer'); // loaded with the first mail, not at every start
    return nodemailer.createTransport({
      host: s.host,
      port: s.port,
      secure: s.secure,
      auth: s.user ? { user: s.user, pass } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(to: string, subject: string, text: string, html?: string): Promise<SentMail> {
    const s = await this.stored();
    if (!s) throw new AppError('conflict', msg('smtp.not_configured'), { smtp: msg('smtp.field.configure_first') });
    const t = await this.transport(s);
    try {
      const info = await t.sendMail({ from: s.from, to, subject, text, ...(html ? { html } : {}) });
      return { messageId: String(info.messageId ?? ''), accepted: (info.accepted ?? []).map(String) };
    } catch (err) {
      throw new AppError('upstream', msg('smtp.send_failed', { error: String((err as Error | null)?.message ?? err) }));
    } finally {
      t.close();
    }
  }

  /** POST /smtp/test: a real mail to `to`. */
  async sendTest(to: string, actor?: number): Promise<SentMail> {
    try {
      const r = await this.send(
        to,
        'Gatehouse: SMTP test',
        'This is a test mail from Gatehouse. Your SMTP settings work.\n\nDies ist eine Testmail von Gatehouse. Die SMTP-Einstellungen funktionieren.\n',
      );
      await this.activity.record({ source: 'settings', event_type: 'smtp_test_sent', msg: msg('smtp.test_sent', { to }), details: { to }, user_id: actor });
      return r;
    } catch (err) {
      await this.activity.record({
        severity: 'warning',
        source: 'settings',
        event_type: 'smtp_test_failed',
        msg: msg('smtp.test_failed', { to }),
        details: { to, error: (err as Error).message },
        user_id: actor,
      });
      throw err;
    }
  }
}
