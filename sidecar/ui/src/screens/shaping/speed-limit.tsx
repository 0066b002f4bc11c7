// The speed cap (speed_limit) in the peer and group forms, and as text on the peer's page and in
// the groups list. The fields are named as the API names the errors (speed_limit.down_kbit, ...),
// so a refusal lands next to its input.
import { NumberField, type FieldForm } from '../../components/form';
import { t } from '../../i18n';

export interface SpeedLimitValue {
  down_kbit: number | null;
  up_kbit: number | null;
}
/** The form's value (the inputs name its two parts: speed_limit.down_kbit, speed_limit.up_kbit). */
export const speedLimitValues = (v: SpeedLimitValue | null | undefined): SpeedLimitValue => ({ down_kbit: v?.down_kbit ?? null, up_kbit: v?.up_kbit ?? null });

/** What the API gets: both fields empty = null (no own cap). */
export function speedLimitBody(v: SpeedLimitValue): SpeedLimitValue | null {
  return v.down_kbit === null && v.up_kbit === null ? null : { down_kbit: v.down_kbit, up_kbit: v.up_kbit };
}

function rate(n: number | null): string {
  if (n === null) return t('shaping.unlimited');
  if (n >= 1000 && n % 100 === 0) return t('shaping.mbit', { n: String(n / 1000) });
  return t('shaping.kbit', { n: String(n) });
}

/** "↓ 2 Mbit/s · ↑ 500 kbit/s", or "No cap". */
export function speedLimitText(v: SpeedLimitValue | null | undefined): string {
  if (!v || (v.down_kbit === null && v.up_kbit === null)) return t('shaping.none');
  return t('shaping.value', { down: rate(v.down_kbit), up: rate(v.up_kbit) });
}

/** The two fields, with a hint (on a peer: the group default it falls back to). */
export function SpeedLimitFields(props: { form: FieldForm; hint: string }) {
  const { form } = props;
  return (
    <fieldset class="speed-limit" data-testid="speed-limit-field">
      <legend>{t('shaping.speedLimit')}</legend>
      <div class="form-grid">
        <NumberField form={form} name="speed_limit.down_kbit" label={t('shaping.down')} min={8} max={10000000} />
        <NumberField form={form} name="speed_limit.up_kbit" label={t('shaping.up')} min={8} max={10000000} />
      </div>
      <p class="hint">{props.hint}</p>
    </fieldset>
  );
}
