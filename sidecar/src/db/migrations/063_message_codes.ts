import { DataTypes, type QueryInterface } from 'sequelize';

// The activity log keeps each row's message as data beside its English text: the code of the
// message catalogue (@gatehouse/common/messages) and its parameters (JSON), so that a reader's app
// words the row in its language. Rows written before have neither (null): they show their text.
export const name = '063_message_codes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('activity_log', 'code', { type: DataTypes.STRING(64), allowNull: true });
  await qi.addColumn('activity_log', 'params', { type: DataTypes.TEXT, allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('activity_log', 'params');
  await qi.removeColumn('activity_log', 'code');
}
