// Sequelize models. Tables are created by migrations (never by sync); models only describe them.
// All times are epoch milliseconds (BIGINT), set by the services from their injectable clock.
import { DataTypes, Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface UserRow {
  id: number;
  username: string;
  email: string | null;
  password_hash: string;
  role: 'admin' | 'user';
  language: 'en' | 'de';
  theme: 'pro' | 'default' | null;
  last_login_at: number | null;
  created_at: number;
  updated_at: number;
}
export interface SessionRow { sid: string; user_id: number | null; data: string; expires_at: number }
export interface LoginAttemptRow { id: number; record_type: string; identifier: string; ip: string | null; outcome: 'failure' | 'success' | 'unlock'; created_at: number }
export interface ApiTokenRow {
  id: number; name: string; token_hash: string; token_hint: string; scopes: string; expires_at: number | null;
  user_id: number | null; peer_id: number | null; fingerprint: string | null; fingerprint_bound_at: number | null;
  last_used_at: number | null; created_by: number | null; created_at: number;
}
export interface SettingRow { key: string; value: string; updated_at: number }
export interface ActivityRow {
  id: number; severity: string; source: string; event_type: string; message: string; details: string | null;
  user_id: number | null; ip: string | null; created_at: number;
}

// A typed model: rows come back as plain objects with `raw: true`.
export type M<T extends object> = ModelStatic<Model<T, Partial<T>>>;

const opts = (tableName: string) => ({ tableName, timestamps: false });
const id = () => ({ type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true });
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export function defineModels(s: Sequelize) {
  const User = s.define('User', {
    id: id(), username: DataTypes.STRING, email: DataTypes.STRING, password_hash: DataTypes.STRING, role: DataTypes.STRING,
    language: DataTypes.STRING, theme: DataTypes.STRING, last_login_at: DataTypes.BIGINT, created_at: ms(), updated_at: ms(),
  }, opts('users')) as unknown as M<UserRow>;
  const Session = s.define('Session', {
    sid: { type: DataTypes.STRING, primaryKey: true }, user_id: DataTypes.INTEGER, data: DataTypes.TEXT, expires_at: ms(),
  }, opts('sessions')) as unknown as M<SessionRow>;
  const LoginAttempt = s.define('LoginAttempt', {
    id: id(), record_type: DataTypes.STRING, identifier: DataTypes.STRING, ip: DataTypes.STRING, outcome: DataTypes.STRING, created_at: ms(),
  }, opts('login_attempts')) as unknown as M<LoginAttemptRow>;
  const ApiToken = s.define('ApiToken', {
    id: id(), name: DataTypes.STRING, token_hash: DataTypes.STRING, token_hint: DataTypes.STRING, scopes: DataTypes.TEXT,
    expires_at: DataTypes.BIGINT, user_id: DataTypes.INTEGER, peer_id: DataTypes.INTEGER, fingerprint: DataTypes.STRING,
    fingerprint_bound_at: DataTypes.BIGINT, last_used_at: DataTypes.BIGINT, created_by: DataTypes.INTEGER, created_at: ms(),
  }, opts('api_tokens')) as unknown as M<ApiTokenRow>;
  const Setting = s.define('Setting', {
    key: { type: DataTypes.STRING, primaryKey: true }, value: DataTypes.TEXT, updated_at: ms(),
  }, opts('settings')) as unknown as M<SettingRow>;
  const Activity = s.define('Activity', {
    id: id(), severity: DataTypes.STRING, source: DataTypes.STRING, event_type: DataTypes.STRING, message: DataTypes.TEXT,
    details: DataTypes.TEXT, user_id: DataTypes.INTEGER, ip: DataTypes.STRING, created_at: ms(),
  }, opts('activity_log')) as unknown as M<ActivityRow>;
  return { User, Session, LoginAttempt, ApiToken, Setting, Activity };
}

export type Models = ReturnType<typeof defineModels>;
