// The exposure of an HTTP route (routes/exposure.ts on the server): the route form's section (public
// or internal, and what everyone outside the VPN gets from an internal route) and the route list's
// badge. The form keeps the page and the redirect URL while another answer is chosen, as the server
// does.
import { Badge } from '../../components/ui';
import { SelectField, TextArea, TextField, type FieldForm } from '../../components/form';
import { t } from '../../i18n';
import type { Route } from '../routes/model';

/** The form's exposure values (part of RouteValues). */
export interface ExposureValues {
  exposure: Route['exposure'];
  exposure_answer: Route['exposure_answer'];
  exposure_page: string;
  exposure_redirect_url: string;
}

export function exposureValues(r: Route | null): ExposureValues {
  return {
    exposure: r?.exposure ?? 'public',
    exposure_answer: r?.exposure_answer ?? 'not_found',
    exposure_page: r?.exposure_page ?? '',
    exposure_redirect_url: r?.exposure_redirect_url ?? '',
  };
}

/** The request fields; an L4 route is always public. */
export function exposureBody(v: ExposureValues, http: boolean) {
  if (!http) return { exposure: 'public' as const };
  return {
    exposure: v.exposure,
    exposure_answer: v.exposure_answer,
    exposure_page: v.exposure_page.trim() ? v.exposure_page : null,
    exposure_redirect_url: v.exposure_redirect_url.trim() || null,
  };
}

export function ExposureSection(props: { form: FieldForm; values: ExposureValues }) {
  const { form, values: v } = props;
  return (
    <fieldset class="route-section exposure-section">
      <legend>{t('exposure.legend')}</legend>
      <p class="hint">{t('exposure.hint')}</p>
      <div class="form-grid">
        <SelectField
          form={form}
          name="exposure"
          label={t('exposure.exposure')}
          options={[
            { value: 'public', label: t('exposure.public') },
            { value: 'internal', label: t('exposure.internal') },
          ]}
        />
        {v.exposure === 'internal' && (
          <SelectField
            form={form}
            name="exposure_answer"
            label={t('exposure.answer')}
            options={[
              { value: 'not_found', label: t('exposure.answerNotFound') },
              { value: 'page', label: t('exposure.answerPage') },
              { value: 'redirect', label: t('exposure.answerRedirect') },
            ]}
          />
        )}
        {v.exposure === 'internal' && v.exposure_answer === 'page' && (
          <div class="field-span">
            <TextArea form={form} name="exposure_page" label={t('exposure.page')} hint={t('exposure.pageHint')} rows={5} />
          </div>
        )}
        {v.exposure === 'internal' && v.exposure_answer === 'redirect' && (
          <TextField form={form} name="exposure_redirect_url" label={t('exposure.redirectUrl')} hint={t('exposure.redirectHint')} type="url" />
        )}
      </div>
    </fieldset>
  );
}

/** "Internal" in the route list (nothing for a public route). */
export function ExposureBadge(props: { route: Pick<Route, 'exposure'> }) {
  if (props.route.exposure !== 'internal') return null;
  return (
    <span title={t('exposure.badgeTitle')} class="exposure-badge">
      <Badge tone="info">{t('exposure.badge')}</Badge>
    </span>
  );
}
