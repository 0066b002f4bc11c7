// Dialogs on the native <dialog> element (focus moves in, Escape closes, focus returns), the
// one-question confirmation for destructive actions, and toasts for short confirmations.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { createStore, useStore } from '../store';
import { t } from '../i18n';

export function Modal(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class={`modal${props.wide ? ' wide' : ''}`} aria-labelledby="modal-title" onClose={props.onClose} onCancel={props.onClose}>
      {props.open && (
        <div class="modal-body">
          <div class="modal-head">
            <h2 id="modal-title">{props.title}</h2>
            <button type="button" class="btn icon" aria-label={t('common.close')} onClick={props.onClose}>
              ×
            </button>
          </div>
          {props.children}
        </div>
      )}
    </dialog>
  );
}

interface Ask {
  message: string;
  confirmLabel: string;
  danger: boolean;
  resolve: (ok: boolean) => void;
}
const asking = createStore<Ask | null>(null);

/** Asks once; resolves true when confirmed. */
export function confirmAction(message: string, opts: { confirmLabel?: string; danger?: boolean } = {}): Promise<boolean> {
  return new Promise((resolve) => asking.set({ message, confirmLabel: opts.confirmLabel ?? t('common.confirm'), danger: opts.danger ?? true, resolve }));
}

export function ConfirmHost() {
  const a = useStore(asking);
  const done = (ok: boolean) => {
    a?.resolve(ok);
    asking.set(null);
  };
  return (
    <Modal title={t('common.confirmTitle')} open={!!a} onClose={() => done(false)}>
      <p>{a?.message}</p>
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => done(false)}>
          {t('common.cancel')}
        </button>
        <button type="button" class={`btn ${a?.danger ? 'danger' : 'primary'}`} onClick={() => done(true)}>
          {a?.confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'bad';
}
const toasts = createStore<Toast[]>([]);
let seq = 0;
export function toast(text: string, tone: 'ok' | 'bad' = 'ok'): void {
  const id = ++seq;
  toasts.update((l) => [...l, { id, text, tone }]);
  setTimeout(() => toasts.update((l) => l.filter((x) => x.id !== id)), tone === 'bad' ? 8000 : 4000);
}
export function ToastHost() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((x) => (
        <div key={x.id} class={`toast ${x.tone}`}>
          {x.text}
        </div>
      ))}
    </div>
  );
}
