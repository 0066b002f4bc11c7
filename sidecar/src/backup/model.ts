// The `backup_jobs` table (migration 052_backup_jobs) as a Sequelize model, next to the code that
// uses it, declared the one way db/define.ts describes and registered by its feature (backup/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface BackupJobRow {
  id: number;
  name: string;
  enabled: boolean;
  schedule: string;
  keep: number;
  target: 'local' | 's3';
  s3_bucket: string | null;
  s3_prefix: string | null;
  s3_region: string | null;
  s3_endpoint: string | null;
  s3_access_key_id: string | null;
  s3_secret_enc: string | null;
  passphrase_enc: string;
  last_run_at: number | null;
  last_status: 'ok' | 'failed' | null;
  last_error: string | null;
  last_file: string | null;
  last_bytes: number | null;
  last_duration_ms: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    BackupJob: M<BackupJobRow>;
  }
}

export function defineBackupModels(s: Sequelize): { BackupJob: M<BackupJobRow> } {
  const BackupJob = defineModel<BackupJobRow>(
    s,
    'BackupJob',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      enabled: { ...flagColumn(), defaultValue: true },
      schedule: DataTypes.STRING,
      keep: DataTypes.INTEGER,
      target: DataTypes.STRING,
      s3_bucket: DataTypes.STRING,
      s3_prefix: DataTypes.STRING,
      s3_region: DataTypes.STRING,
      s3_endpoint: DataTypes.STRING,
      s3_access_key_id: DataTypes.STRING,
      s3_secret_enc: DataTypes.TEXT,
      passphrase_enc: DataTypes.TEXT,
      last_run_at: DataTypes.BIGINT,
      last_status: DataTypes.STRING,
      last_error: DataTypes.TEXT,
      last_file: DataTypes.STRING,
      last_bytes: DataTypes.BIGINT,
      last_duration_ms: DataTypes.INTEGER,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('backup_jobs'),
  );
  return { BackupJob };
}
