// A group of checkboxes bound to one array field of a form (e.g. a token's `scopes`): the field's
// server-side error shows under the group, which carries the field's id so FormErrors finds it.
import type { FieldForm } from './form';
import { fid } from './form';
import { t } from '../i18n';

export function CheckGroup(props: { form: FieldForm; name: string; label: string; options: { value: string; label: string }[] }) {
  const { form, name } = props;
  const got = form.get(name);
  const value: string[] = Array.isArray(got) ? got.map(String) : [];
  const err = form.errors[name];
  return (
    <fieldset class={`field checkgroup${err ? ' has-error' : ''}`} id={fid(name)} aria-describedby={err ? `${fid(name)}-err` : undefined} tabIndex={-1}>
      <legend>{props.label}</legend>
      {props.options.map((o) => (
        <label key={o.value} class="check">
          <input
            type="checkbox"
            name={name}
            value={o.value}
            checked={value.includes(o.value)}
            onChange={(e) => form.set(name, e.currentTarget.checked ? [...value, o.value] : value.filter((v) => v !== o.value))}
          />
          {o.label}
        </label>
      ))}
      {err && (
        <p class="field-error" id={`${fid(name)}-err`}>
          {err}
        </p>
      )}
    </fieldset>
  );
}

/**
 * Checkboxes in groups (e.g. a webhook's event kinds by area), each group with a "select all" box
 * that is checked when all of its options are, mixed when some are. Bound to one array field: its
 * server-side error shows under the whole, which carries the field's id so FormErrors finds it.
 */
export function GroupedCheckGroup(props: {
  name: string;
  label: string;
  value: string[];
  onChange: (value: string[]) => void;
  error?: string;
  groups: { key: string; label: string; options: { value: string; label: string; title?: string }[] }[];
}) {
  const { name, value, error } = props;
  const chosen = new Set(value);
  return (
    <fieldset
      class={`field checkgroup grouped${error ? ' has-error' : ''}`}
      id={fid(name)}
      aria-describedby={error ? `${fid(name)}-err` : undefined}
      tabIndex={-1}
    >
      <legend>{props.label}</legend>
      <div class="check-groups">
        {props.groups.map((g) => {
          const all = g.options.length > 0 && g.options.every((o) => chosen.has(o.value));
          const some = !all && g.options.some((o) => chosen.has(o.value));
          const groupValues = g.options.map((o) => o.value);
          return (
            <fieldset key={g.key} class="check-group" data-group={g.key}>
              <legend>
                <label class="check group-all">
                  <input
                    type="checkbox"
                    checked={all}
                    ref={(el) => {
                      if (el) el.indeterminate = some;
                    }}
                    aria-label={t('common.selectAllOf', { name: g.label })}
                    onChange={(e) =>
                      props.onChange(
                        e.currentTarget.checked ? [...value, ...groupValues.filter((v) => !chosen.has(v))] : value.filter((v) => !groupValues.includes(v)),
                      )
                    }
                  />
                  {g.label}
                </label>
              </legend>
              {g.options.map((o) => (
                <label key={o.value} class="check" title={o.title}>
                  <input
                    type="checkbox"
                    name={name}
                    value={o.value}
                    checked={chosen.has(o.value)}
                    onChange={(e) => props.onChange(e.currentTarget.checked ? [...value, o.value] : value.filter((v) => v !== o.value))}
                  />
                  {o.label}
                </label>
              ))}
            </fieldset>
          );
        })}
      </div>
      {error && (
        <p class="field-error" id={`${fid(name)}-err`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}
