// The row types of the models, for raw reads in tests (`raw: true`: Sequelize returns the plain row
// but types it as the model instance), as the services type theirs: `(await M.findByPk(id, { raw:
// true })) as Row<'Route'> | null`.
import type { Model, ModelStatic } from 'sequelize';
import type { Models } from '../../src/db/models.js';

/** The row of the model named K (its columns, as a raw read returns them). */
export type Row<K extends keyof Models> = Models[K] extends ModelStatic<Model<infer T, infer _C>> ? T : never;

/** The rows of a raw findAll as their row type (Sequelize types them as model instances). */
export const asRows = <K extends keyof Models>(found: readonly object[]): Row<K>[] => found as Row<K>[];
