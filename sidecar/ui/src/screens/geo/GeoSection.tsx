// The route form's country filter (geo_filter): a switch, the mode (allow or deny) and a country
// multi-select named by Intl.DisplayNames, with the chosen countries listed as removable chips.
// The server's errors appear here: `geo_filter` (no country database) at the switch,
// `geo_filter.countries…` under the list.
import { useState } from 'preact/hooks';
import { CheckField, SelectField, fid, type Form } from '../../components/form';
import { useApi } from '../../hooks';
import { t, useLang } from '../../i18n';
import type { GeoipStatusResponse, Route } from '../../protocol';
import { countryList, countryName } from './countries';
import './geo.css';

/** The form values this section edits (a part of the route form's values). */
export interface GeoValues {
  geo_filter_enabled: boolean;
  geo_filter: GeoFilter;
}

/** A route's country filter as served. */
type GeoFilter = NonNullable<Route['geo_filter']>;

export const geoValues = (r: { geo_filter?: GeoFilter | null } | null): GeoValues => ({
  geo_filter_enabled: !!r?.geo_filter,
  geo_filter: r?.geo_filter ? { mode: r.geo_filter.mode, countries: [...r.geo_filter.countries] } : { mode: 'allow', countries: [] },
});

/** The request's geo_filter: the filter while the switch is on, else null. */
export const geoBody = (v: GeoValues) => (v.geo_filter_enabled ? { mode: v.geo_filter.mode, countries: v.geo_filter.countries } : null);

export function GeoSection<T extends GeoValues>(props: { form: Form<T> }) {
  const lang = useLang();
  const form = props.form as unknown as Form<GeoValues>; // reason: the section edits only its own keys of the route form
  const db = useApi<GeoipStatusResponse>('/system/geoip');
  const [q, setQ] = useState('');
  const v = form.values;
  const chosen = v.geo_filter.countries;
  const all = countryList(lang);
  const shown = q.trim() ? all.filter((c) => `${c.name} ${c.code}`.toLowerCase().includes(q.trim().toLowerCase()) || chosen.includes(c.code)) : all;
  const setCountries = (codes: string[]) => form.set('geo_filter.countries', [...new Set(codes)].sort());
  const listErrors = Object.entries(form.errors).filter(([k]) => k === 'geo_filter.countries' || k.startsWith('geo_filter.countries.'));
  const noDb = db.data && !db.data.geoip.present;
  return (
    <fieldset class="route-section geo-section">
      <legend>{t('geo.section')}</legend>
      <p class="hint">{t('geo.hint')}</p>
      {noDb && (
        <p class="banner info" data-testid="geo-no-db">
          {t('geo.noDatabase')}
        </p>
      )}
      <CheckField form={form} name="geo_filter_enabled" also="geo_filter" label={t('geo.on')} />
      {v.geo_filter_enabled && (
        <div class="form-grid">
          <SelectField
            form={form}
            name="geo_filter.mode"
            label={t('geo.mode')}
            options={[
              { value: 'allow', label: t('geo.allow') },
              { value: 'deny', label: t('geo.deny') },
            ]}
          />
          <div class="field">
            <label for="geo-search">{t('geo.search')}</label>
            <input id="geo-search" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} autoComplete="off" />
          </div>
          <div class={`field field-span${listErrors.length ? ' has-error' : ''}`}>
            <label for={fid('geo_filter.countries')}>{t('geo.countries')}</label>
            <select
              id={fid('geo_filter.countries')}
              name="geo_filter.countries"
              multiple
              size={8}
              aria-invalid={listErrors.length ? 'true' : undefined}
              aria-describedby={`${fid('geo_filter.countries')}-hint`}
              onChange={(e) => {
                const visible = new Set(shown.map((c) => c.code));
                const kept = chosen.filter((c) => !visible.has(c));
                setCountries([...kept, ...[...e.currentTarget.selectedOptions].map((o) => o.value)]);
              }}
            >
              {shown.map((c) => (
                <option key={c.code} value={c.code} selected={chosen.includes(c.code)}>
                  {c.name} ({c.code})
                </option>
              ))}
            </select>
            <p class="hint" id={`${fid('geo_filter.countries')}-hint`}>
              {t('geo.countriesHint')}
            </p>
            <div class="geo-chips" aria-live="polite">
              <span class="muted">{t('geo.selected', { n: chosen.length })}:</span> {chosen.length === 0 && <span class="muted">{t('geo.none')}</span>}
              {chosen.map((code) => (
                <button
                  type="button"
                  key={code}
                  class="geo-chip"
                  title={t('geo.remove', { name: countryName(code, lang) })}
                  // the name holds the visible text (the country and its code): speech input finds the chip by what it shows
                  aria-label={t('geo.remove', { name: `${countryName(code, lang)} ${code}` })}
                  onClick={() => setCountries(chosen.filter((c) => c !== code))}
                >
                  {countryName(code, lang)} <code>{code}</code> <span aria-hidden="true">×</span>
                </button>
              ))}
            </div>
            {listErrors.map(([k, m]) => (
              <p class="field-error" key={k} id={k === 'geo_filter.countries' ? `${fid(k)}-err` : undefined}>
                {m}
              </p>
            ))}
          </div>
        </div>
      )}
    </fieldset>
  );
}
