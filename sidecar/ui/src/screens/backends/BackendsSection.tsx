// The route form's sections for HTTP routes with several backends (values.ts): "Additional backends"
// (rows after the route's target: peer or gateway, its LAN host, port, weight; added and removed),
// the load-balancing policy (the cookie's name for sticky sessions) and the active health check;
// and "Headers and compression" (request and response header rows: set or delete; the encodings
// offered). Every server `fields` message appears at its input or, for a whole row or list, at it.
import { useEffect, useRef } from 'preact/hooks';
import { CheckField, NumberField, SelectField, TextField, fid, type FieldForm, type Form } from '../../components/form';
import { t, useLang } from '../../i18n';
import type { WizardPeer } from '../../protocol';
import {
  ENCODING_LIST,
  LB_POLICY_LIST,
  PLACEHOLDERS,
  backendKey,
  emptyBackend,
  emptyHeader,
  headerPlan,
  type BackendRow,
  type HeaderDir,
  type TrafficValues,
} from './values';
import './backends.css';

/** Messages of keys no input shows (a whole row, a whole list): each with the id FormErrors looks for, so it is not repeated there. */
function Messages(props: { form: FieldForm; keys: string[] }) {
  const list = props.keys.filter((k) => props.form.errors[k]);
  if (!list.length) return null;
  return (
    <>
      {list.map((k) => (
        <p key={k} class="field-error field-span" id={fid(k)}>
          {props.form.errors[k]}
        </p>
      ))}
    </>
  );
}

const peerLabel = (p: WizardPeer) => `${p.name} (${p.ip})`;

function BackendRowFields(props: { form: Form<TrafficValues>; row: number; value: BackendRow; peers: WizardPeer[]; weights: boolean }) {
  const { form, row, value } = props;
  const base = `extra_backends.${row}`;
  const n = row + 2;
  // a kind's peers are another list: the chosen one is dropped when the kind changes
  const kind = useRef(value.target_kind);
  useEffect(() => {
    if (kind.current !== value.target_kind && value.peer_id !== null) form.set(`${base}.peer_id`, null);
    kind.current = value.target_kind;
  }, [value.target_kind]);
  const gateway = value.target_kind === 'gateway';
  const choices = (gateway ? props.peers.filter((p) => p.peer_type === 'gateway') : props.peers).map((p) => ({ value: p.id, label: peerLabel(p) }));
  const remove = () =>
    form.set(
      'extra_backends',
      form.values.extra_backends.filter((_, i) => i !== row),
    );
  return (
    <fieldset class="backend-row field-span" data-testid="backend-row">
      <legend>{t('backends.rowLegend', { n })}</legend>
      <div class="form-grid">
        <SelectField
          form={form}
          name={`${base}.target_kind`}
          also={backendKey(row, 'target_kind')}
          label={t('backends.kind')}
          options={[
            { value: 'peer', label: t('backends.kindPeer') },
            { value: 'gateway', label: t('backends.kindGateway') },
          ]}
        />
        <SelectField
          form={form}
          name={`${base}.peer_id`}
          also={backendKey(row, 'peer_id')}
          label={gateway ? t('backends.gateway') : t('backends.peer')}
          numeric
          empty={gateway ? t('backends.chooseGateway') : t('backends.choosePeer')}
          options={choices}
          required
        />
        {gateway && <TextField form={form} name={`${base}.target_host`} also={backendKey(row, 'target_host')} label={t('backends.host')} required />}
        <NumberField form={form} name={`${base}.target_port`} also={backendKey(row, 'target_port')} label={t('backends.port')} min={1} max={65535} required />
        {props.weights && <NumberField form={form} name={`${base}.weight`} also={backendKey(row, 'weight')} label={t('backends.weight')} min={1} max={100} />}
        <Messages form={form} keys={[backendKey(row)]} />
        <div class="field-span backend-row-actions">
          <button type="button" class="btn small" onClick={remove} aria-label={t('backends.removeRow', { n })}>
            {t('backends.remove')}
          </button>
        </div>
      </div>
    </fieldset>
  );
}

/** "Additional backends", the policy and the health check (HTTP routes). */
export function BackendsSection<T extends TrafficValues>(props: { form: Form<T>; peers: WizardPeer[] }) {
  useLang();
  const form = props.form as unknown as Form<TrafficValues>; // reason: the section edits only its own keys of the route form
  const v = form.values;
  const rows = v.extra_backends;
  const several = rows.length > 0;
  const weights = v.lb_policy === 'round_robin';
  // errors of the list as a whole and of its first entry (the route's target, whose inputs are above)
  const listKeys = ['backends', ...Object.keys(form.errors).filter((k) => k.startsWith('backends.0') && k !== 'backends.0.weight')];
  return (
    <>
      <fieldset class="route-section backends-section">
        <legend>{t('backends.section')}</legend>
        <p class="hint">{t('backends.hint')}</p>
        <div class="form-grid">
          {rows.map((b, i) => (
            <BackendRowFields key={b.uid} form={form} row={i} value={b} peers={props.peers} weights={weights} />
          ))}
          <Messages form={form} keys={listKeys} />
          <div class="field-span">
            <button type="button" class="btn small" onClick={() => form.set('extra_backends', [...rows, emptyBackend()])}>
              {t('backends.add')}
            </button>
          </div>
          {several && (
            <>
              <SelectField
                form={form}
                name="lb_policy"
                label={t('backends.policy')}
                hint={t(`backends.policyHint_${v.lb_policy}`)}
                options={LB_POLICY_LIST.map((p) => ({ value: p, label: t(`backends.policy_${p}`) }))}
              />
              {v.lb_policy === 'cookie' && (
                <TextField form={form} name="lb_cookie_name" label={t('backends.cookieName')} hint={t('backends.cookieNameHint')} required autoComplete="off" />
              )}
              {weights && (
                <NumberField
                  form={form}
                  name="target_weight"
                  also="backends.0.weight"
                  label={t('backends.targetWeight')}
                  hint={t('backends.weightHint')}
                  min={1}
                  max={100}
                />
              )}
            </>
          )}
        </div>
      </fieldset>
      <fieldset class="route-section">
        <legend>{t('backends.healthSection')}</legend>
        <p class="hint">{t('backends.healthHint')}</p>
        <CheckField form={form} name="health_check_enabled" also="health_check" label={t('backends.healthOn')} />
        {v.health_check_enabled && (
          <div class="form-grid">
            <TextField form={form} name="health_check.path" label={t('backends.healthPath')} hint={t('backends.healthPathHint')} autoComplete="off" />
            <NumberField form={form} name="health_check.interval_s" label={t('backends.healthInterval')} min={1} max={3600} />
            <NumberField
              form={form}
              name="health_check.timeout_s"
              label={t('backends.healthTimeout')}
              hint={t('backends.healthTimeoutHint')}
              min={1}
              max={60}
            />
            <NumberField form={form} name="health_check.expect_status" label={t('backends.healthStatus')} min={100} max={599} />
          </div>
        )}
      </fieldset>
    </>
  );
}

function HeaderRows(props: { form: Form<TrafficValues>; dir: HeaderDir }) {
  const { form, dir } = props;
  const rows = form.values.header_rows[dir];
  const { keys } = headerPlan(rows, dir);
  const path = `header_rows.${dir}`;
  const what = t(`backends.${dir}`);
  return (
    <fieldset class="field-span header-rows" data-testid={`header-rows-${dir}`}>
      <legend>{what}</legend>
      {rows.map((h, i) => {
        const n = i + 1;
        return (
          <div class="header-row" key={i}>
            <TextField
              form={form}
              name={`${path}.${i}.name`}
              also={keys[i] ?? undefined}
              label={t('backends.headerName', { n })}
              placeholder={t('backends.headerNamePlaceholder')}
              autoComplete="off"
            />
            <SelectField
              form={form}
              name={`${path}.${i}.action`}
              label={t('backends.headerAction', { n })}
              options={[
                { value: 'set', label: t('backends.actionSet') },
                { value: 'delete', label: t('backends.actionDelete') },
              ]}
            />
            {h.action === 'set' && <TextField form={form} name={`${path}.${i}.value`} label={t('backends.headerValue', { n })} autoComplete="off" />}
            <button
              type="button"
              class="btn small header-remove"
              aria-label={t('backends.removeHeader', { what, n })}
              onClick={() =>
                form.set(
                  path,
                  rows.filter((_, j) => j !== i),
                )
              }
            >
              {t('backends.remove')}
            </button>
          </div>
        );
      })}
      <Messages form={form} keys={[dir, `${dir}.set`, `${dir}.delete`]} />
      <button type="button" class="btn small" onClick={() => form.set(path, [...rows, emptyHeader()])} aria-label={t('backends.addHeaderTo', { what })}>
        {t('backends.addHeader')}
      </button>
    </fieldset>
  );
}

/** "Headers and compression" (HTTP routes). */
export function HeadersSection<T extends TrafficValues>(props: { form: Form<T> }) {
  useLang();
  const form = props.form as unknown as Form<TrafficValues>; // reason: the section edits only its own keys of the route form
  const v = form.values;
  const compErr = form.errors.compression ?? Object.entries(form.errors).find(([k]) => k.startsWith('compression.'))?.[1];
  return (
    <fieldset class="route-section headers-section">
      <legend>{t('backends.headersSection')}</legend>
      <p class="hint">{t('backends.headersHint', { placeholders: PLACEHOLDERS.join(', ') })}</p>
      <div class="form-grid">
        <HeaderRows form={form} dir="request_headers" />
        <HeaderRows form={form} dir="response_headers" />
        <fieldset class={`field-span checks${compErr ? ' has-error' : ''}`} aria-describedby={compErr ? fid('compression') : undefined}>
          <legend>{t('backends.compression')}</legend>
          {ENCODING_LIST.map((e) => (
            <label key={e} class="check">
              <input
                type="checkbox"
                name="compression"
                value={e}
                checked={v.compression.includes(e)}
                onChange={(ev) => form.set('compression', ev.currentTarget.checked ? [...v.compression, e] : v.compression.filter((x) => x !== e))}
              />
              {t(`backends.enc_${e}`)}
            </label>
          ))}
          <p class="hint">{t('backends.compressionHint')}</p>
          {compErr && (
            <p class="field-error" id={fid('compression')}>
              {compErr}
            </p>
          )}
        </fieldset>
      </div>
    </fieldset>
  );
}
