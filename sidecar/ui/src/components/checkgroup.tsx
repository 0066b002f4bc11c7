// A group of checkboxes bound to one array field of a form (e.g. a token's `scopes`): the field's
// server-side error shows under the group, which carries the field's id so FormErrors finds it.
import type { Form } from './form';
import { fid } from './form';

export function CheckGroup(props: { form: Form<any>; name: string; label: string; options: { value: string; label: string }[] }) {
  const { form, name } = props;
  const value: string[] = form.get(name) ?? [];
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
