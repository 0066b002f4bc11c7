// The `client_machines` table (migration 061_client) as a Sequelize model, declared the one way
// db/define.ts describes and registered by its feature (client-api/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface ClientMachineRow {
  id: number;
  token_id: number;
  /** SHA-256 hex of the fingerprint header */
  fingerprint: string;
  peer_id: number | null;
  hostname: string;
  hostname_source: 'agent' | 'admin';
  platform: string;
  client_version: string;
  last_seen_at: number | null;
  handshake_age_s: number | null;
  rx_bytes: number | null;
  tx_bytes: number | null;
  status_json: string | null;
  status_at: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    ClientMachine: M<ClientMachineRow>;
  }
}

export function defineClientModels(s: Sequelize): { ClientMachine: M<ClientMachineRow> } {
  const ClientMachine = defineModel<ClientMachineRow>(
    s,
    'ClientMachine',
    {
      id: idColumn(),
      token_id: DataTypes.INTEGER,
      fingerprint: DataTypes.STRING,
      peer_id: DataTypes.INTEGER,
      hostname: DataTypes.STRING,
      hostname_source: DataTypes.STRING,
      platform: DataTypes.STRING,
      client_version: DataTypes.STRING,
      last_seen_at: DataTypes.BIGINT,
      handshake_age_s: DataTypes.INTEGER,
      rx_bytes: DataTypes.BIGINT,
      tx_bytes: DataTypes.BIGINT,
      status_json: DataTypes.TEXT,
      status_at: DataTypes.BIGINT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('client_machines'),
  );
  return { ClientMachine };
}
