import { DataTypes, type QueryInterface } from 'sequelize';

// Custom certificates (owned by src/certificates/): a certificate chain an admin uploaded (PEM) and
// its private key, sealed with the master key. A route uses one when it names it
// (routes.certificate_id; null = the automatic certificate from ACME or the internal CA). The
// parsed facts (names, issuer, validity, fingerprint) are stored for lists and the expiry check.
export const name = '069_custom_certificates';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('certificates', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(100), allowNull: false },
    /** the leaf certificate and its chain, PEM */
    certificate_pem: { type: DataTypes.TEXT, allowNull: false },
    /** the private key (PKCS#8 PEM), sealed with the master key */
    private_key_enc: { type: DataTypes.TEXT, allowNull: false },
    /** JSON array of the leaf's DNS names (subject alternative names, else the subject CN) */
    names: { type: DataTypes.TEXT, allowNull: false },
    issuer: { type: DataTypes.STRING(500), allowNull: false },
    not_before: { type: DataTypes.BIGINT, allowNull: false },
    not_after: { type: DataTypes.BIGINT, allowNull: false },
    /** upper-case hex with colons (95 characters) */
    fingerprint_sha256: { type: DataTypes.STRING(100), allowNull: false },
    /** when the expiry warning was last sent for this certificate (the housekeeping job warns once per certificate) */
    expiry_warned_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.addIndex('certificates', ['name'], { name: 'certificates_name', unique: true });
  await qi.addColumn('routes', 'certificate_id', { type: DataTypes.INTEGER, allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('routes', 'certificate_id');
  await qi.dropTable('certificates');
}
