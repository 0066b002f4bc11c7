// The `certificates` table (migration 069_custom_certificates) as a Sequelize model, registered by its
// feature (certificates/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface CertificateRow {
  id: number;
  name: string;
  /** the leaf and its chain, PEM */
  certificate_pem: string;
  /** the private key (PKCS#8 PEM) sealed with the master key */
  private_key_enc: string;
  /** JSON array of the leaf's DNS names */
  names: string;
  issuer: string;
  not_before: number;
  not_after: number;
  fingerprint_sha256: string;
  expiry_warned_at: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    Certificate: M<CertificateRow>;
  }
}

export function defineCertificateModels(s: Sequelize): { Certificate: M<CertificateRow> } {
  const Certificate = defineModel<CertificateRow>(
    s,
    'Certificate',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      certificate_pem: DataTypes.TEXT,
      private_key_enc: DataTypes.TEXT,
      names: DataTypes.TEXT,
      issuer: DataTypes.STRING,
      not_before: msColumn(),
      not_after: msColumn(),
      fingerprint_sha256: DataTypes.STRING,
      expiry_warned_at: DataTypes.BIGINT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('certificates'),
  );
  return { Certificate };
}
