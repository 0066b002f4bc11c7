// Forms: values kept in state (nothing typed is lost when the server refuses), each server-side
// `fields` message shown next to its input (aria-invalid + aria-describedby), the general error on
// top, a busy state while saving. Field names are the API's body field names, with dots for nesting
// ("rate_limit.requests"): the server's `fields` keys use the same path.
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { t } from '../i18n';

export interface Form<T extends object> {
  values: T;
  /** Sets a value and drops its error (and the error of `also`, the field the input stands for). */
  set: (name: string, value: unknown, also?: string) => void;
  setAll: (values: Partial<T>) => void;
  errors: Record<string, string>;
  formError: string | null;
  busy: boolean;
  /** Runs fn with the values; an ApiError fills errors/formError instead of throwing. True when it succeeded. */
  submit: (fn: (values: T) => Promise<unknown>) => Promise<boolean>;
  get: (name: string) => unknown;
}

/** What a field component uses of a form, whatever the form's values. */
export type FieldForm = Pick<Form<object>, 'get' | 'set' | 'errors' | 'formError' | 'busy'>;

/** A stored value as an input shows it: numbers as they are, nothing as empty. */
const shown = (v: unknown): string | number => (typeof v === 'number' ? v : v === null || v === undefined ? '' : String(v));

export function getPath(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o === null || o === undefined ? undefined : (o as Record<string, unknown>)[k]), obj);
}
export function setPath<T>(obj: T, path: string, value: unknown): T {
  const keys = path.split('.');
  type Node = Record<string, unknown>;
  // reason: an array is indexed by its keys' text like an object here ("ip_filter_rules.2")
  const copy = (v: unknown): Node => (Array.isArray(v) ? ([...v] as unknown as Node) : { ...(v as Node) });
  const root = copy(obj);
  let cur = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const k = keys[i];
    const next = cur[k];
    cur[k] = next && typeof next === 'object' ? copy(next) : {};
    cur = cur[k] as Node;
  }
  cur[keys[keys.length - 1]] = value;
  // reason: the copy has obj's shape with the one path set
  return root as unknown as T;
}

export function useForm<T extends object>(initial: T): Form<T> {
  const [values, setValues] = useState<T>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(values);
  latest.current = values;
  return {
    values,
    errors,
    formError,
    busy,
    get: (name) => getPath(values, name),
    set: (name, value, also) => {
      setValues((v) => (latest.current = setPath(v, name, value)));
      if (errors[name] || (also && errors[also]))
        setErrors((e) => {
          const n = { ...e };
          delete n[name];
          if (also) delete n[also];
          return n;
        });
    },
    setAll: (partial) => setValues((v) => (latest.current = { ...v, ...partial })),
    submit: async (fn) => {
      setBusy(true);
      setFormError(null);
      try {
        await fn(latest.current);
        setErrors({});
        return true;
      } catch (err) {
        if (err instanceof ApiError) {
          setErrors(err.fields);
          // Caddy's refusal: our words for what happened, then Caddy's own reason verbatim (it has no translation).
          const proxy = typeof err.body.proxy_error === 'string' ? err.body.proxy_error : null;
          setFormError(
            proxy !== null
              ? `${t('common.proxyRefused')} ${proxy}`
              : Object.keys(err.fields).length
                ? `${err.message} — ${t('common.fieldsError')}`
                : err.message,
          );
          // Move focus to the first invalid input so keyboard and screen-reader users find it.
          queueMicrotask(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
        } else {
          setFormError(String((err as Error)?.message ?? err));
        }
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

interface FieldProps {
  form: FieldForm;
  name: string;
  label: string;
  hint?: string;
  required?: boolean;
  /**
   * Another API field whose errors this input shows (the input that stands for it on screen: a peer
   * chosen from a list is the target the server calls target_host), so every error is at an input.
   */
  also?: string;
}

/** The error shown at a field: its own, else the one of the field it stands for. */
const fieldError = (props: FieldProps): string | undefined => props.form.errors[props.name] ?? (props.also ? props.form.errors[props.also] : undefined);

function FieldWrap(props: FieldProps & { children: ComponentChildren; inline?: boolean }) {
  const err = fieldError(props);
  return (
    <div class={`field${props.inline ? ' inline' : ''}${err ? ' has-error' : ''}`}>
      {props.children}
      {props.hint && (
        <p class="hint" id={`${fid(props.name)}-hint`}>
          {props.hint}
        </p>
      )}
      {err && (
        <p class="field-error" id={`${fid(props.name)}-err`}>
          {err}
        </p>
      )}
    </div>
  );
}

export const fid = (name: string) => `f-${name.replace(/[^\w-]/g, '-')}`;
function aria(props: FieldProps) {
  const err = fieldError(props);
  const ids = [props.hint ? `${fid(props.name)}-hint` : '', err ? `${fid(props.name)}-err` : ''].filter(Boolean).join(' ');
  return {
    id: fid(props.name),
    name: props.name,
    'aria-invalid': err ? ('true' as const) : undefined,
    'aria-describedby': ids || undefined,
    required: props.required,
    'data-also': props.also,
  };
}
function Label(props: FieldProps) {
  return (
    <label for={fid(props.name)}>
      {props.label}
      {props.required && (
        <span class="req" aria-hidden="true">
          {' '}
          *
        </span>
      )}
    </label>
  );
}

export function TextField(
  props: FieldProps & {
    type?: 'text' | 'password' | 'email' | 'url' | 'search' | 'tel' | 'date' | 'datetime-local' | 'time';
    placeholder?: string;
    autoComplete?: string;
    inputMode?: InputHTMLAttributes['inputMode'];
    disabled?: boolean;
  },
) {
  const v = props.form.get(props.name);
  return (
    <FieldWrap {...props}>
      <Label {...props} />
      <input
        {...aria(props)}
        // preact types the attributes of each input type apart; those given here suit every type listed
        type={(props.type ?? 'text') as 'text'}
        value={shown(v)}
        placeholder={props.placeholder}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        disabled={props.disabled}
        onInput={(e) => props.form.set(props.name, e.currentTarget.value, props.also)}
      />
    </FieldWrap>
  );
}

/** A number input; empty means null (the API's "not set"). */
export function NumberField(props: FieldProps & { min?: number; max?: number; step?: number; disabled?: boolean }) {
  const v = props.form.get(props.name);
  return (
    <FieldWrap {...props}>
      <Label {...props} />
      <input
        {...aria(props)}
        type="number"
        value={shown(v)}
        min={props.min}
        max={props.max}
        step={props.step}
        disabled={props.disabled}
        onInput={(e) => {
          const s = e.currentTarget.value;
          props.form.set(props.name, s === '' ? null : Number(s), props.also);
        }}
      />
    </FieldWrap>
  );
}

export function TextArea(props: FieldProps & { rows?: number; placeholder?: string }) {
  return (
    <FieldWrap {...props}>
      <Label {...props} />
      <textarea
        {...aria(props)}
        rows={props.rows ?? 3}
        placeholder={props.placeholder}
        value={shown(props.form.get(props.name))}
        onInput={(e) => props.form.set(props.name, e.currentTarget.value, props.also)}
      />
    </FieldWrap>
  );
}

export function SelectField(props: FieldProps & { options: { value: string | number; label: string }[]; empty?: string; numeric?: boolean }) {
  const v = props.form.get(props.name);
  return (
    <FieldWrap {...props}>
      <Label {...props} />
      <select
        {...aria(props)}
        value={shown(v)}
        onChange={(e) => {
          const s = e.currentTarget.value;
          props.form.set(props.name, s === '' ? null : props.numeric ? Number(s) : s, props.also);
        }}
      >
        {props.empty !== undefined && <option value="">{props.empty}</option>}
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </FieldWrap>
  );
}

export function CheckField(props: FieldProps) {
  return (
    <FieldWrap {...props} inline>
      <input
        {...aria(props)}
        type="checkbox"
        checked={!!props.form.get(props.name)}
        onChange={(e) => props.form.set(props.name, e.currentTarget.checked, props.also)}
      />
      <Label {...props} />
    </FieldWrap>
  );
}

/** The form's general error and any `fields` whose input is not on screen (so nothing is hidden). */
export function FormErrors(props: { form: FieldForm; shown?: string[] }) {
  const { form } = props;
  if (!form.formError) return null;
  const onScreen = new Set(props.shown ?? []);
  const other = Object.entries(form.errors).filter(
    ([k]) => !onScreen.has(k) && !document.getElementById(fid(k)) && !document.querySelector(`[data-also="${CSS.escape(k)}"]`),
  );
  return (
    <div class="banner error" role="alert">
      <p>{form.formError}</p>
      {other.length > 0 && (
        <ul>
          {other.map(([k, v]) => (
            <li key={k}>
              <code>{k}</code>: {v}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function SubmitButton(props: { form: FieldForm; label: string }) {
  return (
    <button type="submit" class="btn primary" disabled={props.form.busy} aria-busy={props.form.busy}>
      {props.form.busy ? t('common.loading') : props.label}
    </button>
  );
}
