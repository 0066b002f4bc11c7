import { DataTypes, type QueryInterface } from 'sequelize';

// Access log of the reverse proxy, ingested from Caddy's JSON access-log file (src/resilience/access-log.ts):
// a bounded table (the newest ACCESS_LOG_MAX_ROWS rows are kept) and the tail cursor (file inode and
// byte offset), advanced only after the rows it covers are stored; each row carries its line's
// (inode, offset), unique, so lines read again after a crash between the two are not stored twice.
export const name = '030_access_log';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('access_log', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    /** request time, epoch ms */
    ts: { type: DataTypes.BIGINT, allowNull: false },
    /** the route whose domain matched the Host (null: no route, e.g. the admin domain) */
    route_id: { type: DataTypes.INTEGER, allowNull: true },
    host: { type: DataTypes.STRING(255), allowNull: false },
    method: { type: DataTypes.STRING(16), allowNull: false },
    uri: { type: DataTypes.TEXT, allowNull: false },
    status: { type: DataTypes.INTEGER, allowNull: false },
    duration_ms: { type: DataTypes.DOUBLE, allowNull: false },
    size: { type: DataTypes.BIGINT, allowNull: false },
    upstream: { type: DataTypes.STRING(255), allowNull: true },
    client_ip: { type: DataTypes.STRING(64), allowNull: true },
    user_agent: { type: DataTypes.STRING(512), allowNull: true },
    /** where the line was read: file inode and byte offset (unique: a line is stored once) */
    src_inode: { type: DataTypes.STRING(32), allowNull: false },
    src_offset: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.addIndex('access_log', ['route_id', 'id']);
  await qi.addIndex('access_log', ['src_inode', 'src_offset'], { unique: true, name: 'access_log_src_unique' });
  await qi.createTable('access_log_cursor', {
    id: { type: DataTypes.INTEGER, primaryKey: true },
    /** inode of the file being read (string: 64-bit values) */
    file_inode: { type: DataTypes.STRING(32), allowNull: false },
    file_offset: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('access_log_cursor');
  await qi.dropTable('access_log');
}
