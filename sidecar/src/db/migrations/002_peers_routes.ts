import { DataTypes, type QueryInterface } from 'sequelize';

const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });
const bool = (d = false) => ({ type: DataTypes.BOOLEAN, allowNull: false, defaultValue: d });

export const name = '002_peers_routes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('peer_groups', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    color: { type: DataTypes.STRING(9), allowNull: true },
    description: { type: DataTypes.STRING(500), allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.createTable('peers', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    description: { type: DataTypes.STRING(500), allowNull: true },
    peer_type: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'regular' },
    enabled: bool(true),
    public_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    private_key_enc: { type: DataTypes.TEXT, allowNull: true },
    preshared_key_enc: { type: DataTypes.TEXT, allowNull: true },
    address: { type: DataTypes.STRING(45), allowNull: false, unique: true },
    allowed_ips: { type: DataTypes.STRING(255), allowNull: false },
    dns: { type: DataTypes.STRING(255), allowNull: true },
    persistent_keepalive: { type: DataTypes.INTEGER, allowNull: true },
    tags: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    group_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peer_groups', key: 'id' }, onDelete: 'SET NULL' },
    hostname: { type: DataTypes.STRING(253), allowNull: true },
    hostname_source: { type: DataTypes.STRING(8), allowNull: true },
    hostname_updated_at: { type: DataTypes.BIGINT, allowNull: true },
    expires_at: { type: DataTypes.BIGINT, allowNull: true },
    api_port: { type: DataTypes.INTEGER, allowNull: true },
    total_rx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    total_tx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    last_raw_rx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    last_raw_tx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    latest_handshake: { type: DataTypes.BIGINT, allowNull: true },
    endpoint: { type: DataTypes.STRING(64), allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.addIndex('peers', ['group_id']);
  await qi.createTable('tags', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(64), allowNull: false },
    name_lower: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: ms(),
  });
  await qi.createTable('peer_traffic', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    peer_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'peers', key: 'id' }, onDelete: 'CASCADE' },
    resolution: { type: DataTypes.STRING(4), allowNull: false },
    bucket_start: ms(),
    rx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    tx: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
  });
  await qi.addIndex('peer_traffic', ['peer_id', 'resolution', 'bucket_start'], { unique: true });
  await qi.addIndex('peer_traffic', ['resolution', 'bucket_start']);
  await qi.createTable('routes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    domain: { type: DataTypes.STRING(253), allowNull: false },
    description: { type: DataTypes.STRING(500), allowNull: true },
    route_type: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'http' },
    target_kind: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'peer' },
    enabled: bool(true),
    peer_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peers', key: 'id' } },
    target_port: { type: DataTypes.STRING(5), allowNull: true },
    target_peer_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peers', key: 'id' } },
    target_lan_host: { type: DataTypes.STRING(253), allowNull: true },
    target_lan_port: { type: DataTypes.INTEGER, allowNull: true },
    wol_enabled: bool(),
    wol_mac: { type: DataTypes.STRING(17), allowNull: true },
    l4_protocol: { type: DataTypes.STRING(3), allowNull: true },
    l4_listen_port: { type: DataTypes.INTEGER, allowNull: true },
    l4_tls_mode: { type: DataTypes.STRING(12), allowNull: true },
    https_enabled: bool(),
    backend_https: bool(),
    compress_enabled: bool(),
    bot_blocker_enabled: bool(),
    bot_blocker_mode: { type: DataTypes.STRING(16), allowNull: true },
    bot_blocker_config: { type: DataTypes.TEXT, allowNull: true },
    monitoring_enabled: bool(),
    ip_filter_enabled: bool(),
    ip_filter_mode: { type: DataTypes.STRING(16), allowNull: true },
    ip_filter_rules: { type: DataTypes.TEXT, allowNull: true },
    acl_enabled: bool(),
    acl_peer_ids: { type: DataTypes.TEXT, allowNull: true },
    rate_limit_enabled: bool(),
    rate_limit_requests: { type: DataTypes.INTEGER, allowNull: true },
    rate_limit_window: { type: DataTypes.STRING(16), allowNull: true },
    retry_enabled: bool(),
    retry_count: { type: DataTypes.INTEGER, allowNull: true },
    retry_status_codes: { type: DataTypes.STRING(128), allowNull: true },
    circuit_breaker_enabled: bool(),
    circuit_breaker_threshold: { type: DataTypes.INTEGER, allowNull: true },
    circuit_breaker_timeout: { type: DataTypes.INTEGER, allowNull: true },
    cb_failure_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    cb_opened_at: { type: DataTypes.BIGINT, allowNull: true },
    mirror_enabled: bool(),
    mirror_targets: { type: DataTypes.TEXT, allowNull: true },
    debug_enabled: bool(),
    basic_auth_user: { type: DataTypes.STRING(128), allowNull: true },
    basic_auth_password_hash: { type: DataTypes.STRING(128), allowNull: true },
    user_ids: { type: DataTypes.TEXT, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.addIndex('routes', ['domain']);
  await qi.addIndex('routes', ['peer_id']);
  await qi.addIndex('routes', ['l4_listen_port']);
}

export async function down(qi: QueryInterface): Promise<void> {
  for (const t of ['routes', 'peer_traffic', 'tags', 'peers', 'peer_groups']) await qi.dropTable(t);
}
