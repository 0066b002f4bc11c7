// The one way a model is declared: a `define<Thing>Models(sequelize)` function per table owner
// (db/models.ts for the platform's core tables; a feature's own model.ts for its tables, which
// also adds them to the Models interface and is named in the feature's Feature `models`), built
// from these column helpers, returning models typed by their row interface, and called once, from
// defineModels() when the database opens. Tables are created by migrations, never by sync.
import { DataTypes, Model, type FindOptions, type ModelAttributes, type ModelOptions, type ModelStatic, type Sequelize } from 'sequelize';

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

/**
 * A model typed by its row interface: every column of the row must be described (the compiler
 * checks `attributes` against `T`).
 */
export function defineModel<T extends object>(
  s: Sequelize,
  name: string,
  attributes: ModelAttributes<Model<T, Partial<T>>, T>,
  options: ModelOptions<Model<T, Partial<T>>>,
): M<T> {
  return s.define<Model<T, Partial<T>>, T>(name, attributes, options);
}

/** Find options for plain rows: `attributes` (column names) narrow the row type to those columns. */
export type RowQuery<T extends object, K extends keyof T> = Omit<FindOptions<T>, 'raw' | 'attributes'> & { attributes?: readonly K[] };

// reason: Sequelize types findAll/findOne({raw: true}) as model instances; with raw they are plain objects of the selected columns
const plain = <R>(v: unknown): R => v as R;

function rawQuery<T extends object, K extends keyof T>(query: RowQuery<T, K>): FindOptions<T> & { raw: true } {
  const { attributes, ...rest } = query;
  return { ...rest, ...(attributes ? { attributes: attributes.map(String) } : {}), raw: true };
}

/** findAll({raw: true}) typed by the row interface (only the columns asked for, when `attributes` is given). */
export async function findRows<T extends object, K extends keyof T = keyof T>(model: M<T>, query: RowQuery<T, K> = {}): Promise<Pick<T, K>[]> {
  return plain<Pick<T, K>[]>(await model.findAll(rawQuery(query)));
}

/** findOne({raw: true}) typed by the row interface; null when nothing matches. */
export async function findRow<T extends object, K extends keyof T = keyof T>(model: M<T>, query: RowQuery<T, K> = {}): Promise<Pick<T, K> | null> {
  return plain<Pick<T, K> | null>(await model.findOne(rawQuery(query)));
}

/** findByPk(id, {raw: true}) typed by the row interface; null when there is no such row. */
export async function findRowByPk<T extends object, K extends keyof T = keyof T>(
  model: M<T>,
  id: number | string,
  query: RowQuery<T, K> = {},
): Promise<Pick<T, K> | null> {
  return plain<Pick<T, K> | null>(await model.findByPk(id, rawQuery(query)));
}
