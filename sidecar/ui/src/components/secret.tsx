// A secret the server shows only once (an API token, a generated password, a gateway.env, a TOTP
// secret): the value to select, a Copy button and a Download as a file, so that it can be kept
// without retyping it. Every screen that shows a secret once uses this.
import { useEffect, useState } from 'preact/hooks';
import { CopyButton } from './ui';
import { t } from '../i18n';
import './secret.css';

/** A link that downloads `text` as the file `filename` (a real download: the browser's save dialog or downloads folder). */
export function DownloadLink(props: { text: string; filename: string; label?: string; primary?: boolean }) {
  const [href, setHref] = useState<string | null>(null);
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([props.text], { type: 'text/plain' }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [props.text]);
  if (!href) return null;
  return (
    <a class={`btn small${props.primary ? ' primary' : ''}`} href={href} download={props.filename}>
      {props.label ?? t('common.downloadNamed', { name: props.filename })}
    </a>
  );
}

export function SecretOnce(props: {
  /** the element id of the value (labels and tests find it) */
  id: string;
  label: string;
  value: string;
  /** the file name Download saves it as */
  filename: string;
  /** shown as a block of lines (an env file), else as one line */
  multiline?: boolean;
  /** an extra class on the value (a screen's own styling) */
  valueClass?: string;
  /** the Copy button's words (default: Copy) */
  copyLabel?: string;
}) {
  return (
    <div class="secret-once">
      <label for={props.id} class="secret-once-label">
        {props.label}
      </label>
      {props.multiline ? (
        <textarea
          id={props.id}
          class={`secret-once-value multiline ${props.valueClass ?? ''}`}
          readOnly
          rows={Math.min(16, props.value.split('\n').length)}
          value={props.value}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
      ) : (
        <input
          id={props.id}
          class={`secret-once-value ${props.valueClass ?? ''}`}
          readOnly
          value={props.value}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
      )}
      <div class="secret-once-actions">
        <CopyButton text={props.value} label={props.copyLabel} />
        <DownloadLink text={props.value} filename={props.filename} />
      </div>
    </div>
  );
}

/** A name as part of a file name: lower case, letters, digits, dot, dash and underscore. */
export function fileSafe(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-.]+|-+$/g, '') || 'secret'
  );
}
