import { DataTypes, type QueryInterface } from 'sequelize';

// Auto-backup jobs (owned by src/backup/): a schedule, how many backups to keep, and where they go
// (the data directory or an S3 bucket). The S3 secret key and the passphrase the backups are sealed
// with are themselves sealed with the master key. The last run's outcome is kept on the row.
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export const name = '052_backup_jobs';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('backup_jobs', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    /** daily | weekly | a five-field cron expression */
    schedule: { type: DataTypes.STRING(128), allowNull: false },
    keep: { type: DataTypes.INTEGER, allowNull: false },
    /** local | s3 */
    target: { type: DataTypes.STRING(8), allowNull: false },
    s3_bucket: { type: DataTypes.STRING(63), allowNull: true },
    s3_prefix: { type: DataTypes.STRING(255), allowNull: true },
    s3_region: { type: DataTypes.STRING(64), allowNull: true },
    s3_endpoint: { type: DataTypes.STRING(255), allowNull: true },
    s3_access_key_id: { type: DataTypes.STRING(255), allowNull: true },
    /** the S3 secret access key, sealed with the master key */
    s3_secret_enc: { type: DataTypes.TEXT, allowNull: true },
    /** the passphrase the job's backups are sealed with, sealed with the master key */
    passphrase_enc: { type: DataTypes.TEXT, allowNull: false },
    last_run_at: { type: DataTypes.BIGINT, allowNull: true },
    /** ok | failed (null: never ran) */
    last_status: { type: DataTypes.STRING(8), allowNull: true },
    last_error: { type: DataTypes.TEXT, allowNull: true },
    last_file: { type: DataTypes.STRING(512), allowNull: true },
    last_bytes: { type: DataTypes.BIGINT, allowNull: true },
    last_duration_ms: { type: DataTypes.INTEGER, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('backup_jobs');
}
