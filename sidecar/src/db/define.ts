// The one way a model is declared: a `define<Thing>Models(sequelize)` function per table owner
// (db/models.ts for the platform, peers and routes; a feature's own model.ts for its tables, which
// also adds them to the Models interface and is named in the feature's Feature `models`), built
// from these column helpers, returning models typed by their row interface, and called once, from
// defineModels() when the database opens. Tables are created by migrations, never by sync.
import { DataTypes, Model, type ModelStatic } from 'sequelize';

/** A typed model: rows come back as plain objects with `raw: true`. */
export type M<T extends object> = ModelStatic<Model<T, Partial<T>>>;

/** Model options: the table's name, no Sequelize-managed timestamps (services set epoch ms). */
export const tableOpts = (tableName: string) => ({ tableName, timestamps: false });
/** Auto-increment integer primary key. */
export const idColumn = () => ({ type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true });
/** A required time in epoch milliseconds. */
export const msColumn = () => ({ type: DataTypes.BIGINT, allowNull: false });
/** A required boolean, false unless given. */
export const flagColumn = () => ({ type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });

/** A boolean column's value as the driver returns it (SQLite 0/1, PostgreSQL true/false, 't', raw strings). */
export const asBool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';
