// Small shared building blocks. Every visible word comes from the dictionaries (t()).
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { navigate } from '../router';
import { t } from '../i18n';
import type { ApiError } from '../api';

/** An in-app link: a real <a href> (new tab, copy link work) that navigates without a reload. */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const { href, onClick, ...rest } = props;
  return (
    <a
      href={href}
      {...rest}
      onClick={(e) => {
        // the caller's own handler first (preact types it as a handler or a signal of one)
        if (typeof onClick === 'function') (onClick as (ev: typeof e) => void)(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    />
  );
}

/**
 * Whether the signed-in role may change things on the current screen (its meta's writeRole; the
 * shell provides it). Below that role the page header hides its actions and says "read-only".
 */
export const Writable = createContext(true);

export function PageHeader(props: { title: string; children?: ComponentChildren; back?: string }) {
  const writable = useContext(Writable);
  return (
    <header class="page-header">
      {props.back && (
        <Link class="back" href={props.back}>
          ← {t('common.back')}
        </Link>
      )}
      <h1 id="page-title" tabIndex={-1}>
        {props.title}
      </h1>
      {!writable && (
        <span class="badge muted read-only-badge" title={t('common.readOnlyHint')}>
          {t('common.readOnly')}
        </span>
      )}
      {writable && props.children && <div class="page-actions">{props.children}</div>}
    </header>
  );
}

export function Spinner(props: { label?: string }) {
  return (
    <div class="spinner" role="status" aria-live="polite">
      <span class="spin" aria-hidden="true" />
      {props.label ?? t('common.loading')}
    </div>
  );
}

export function EmptyState(props: { title: string; text?: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.text && <p>{props.text}</p>}
      {props.children}
    </div>
  );
}

export function ErrorBanner(props: { error: ApiError | Error | string | null | undefined; onRetry?: () => void }) {
  if (!props.error) return null;
  const msg = typeof props.error === 'string' ? props.error : props.error.message || t('common.error');
  return (
    <div class="banner error" role="alert">
      <span>{msg}</span>
      {props.onRetry && (
        <button type="button" class="btn small" onClick={props.onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  );
}

export function StatusDot(props: { state: 'up' | 'down' | 'warn' | 'off' | 'unknown'; label: string }) {
  return (
    <span class={`status status-${props.state}`}>
      <span class="dot" aria-hidden="true" />
      {props.label}
    </span>
  );
}

export function Badge(props: { children: ComponentChildren; tone?: 'info' | 'ok' | 'warn' | 'bad' | 'muted' }) {
  return <span class={`badge ${props.tone ?? 'muted'}`}>{props.children}</span>;
}

export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
        } catch {
          // Clipboard API needs a secure context; fall back to a selection the user can copy.
          const ta = document.createElement('textarea');
          ta.value = props.text;
          document.body.append(ta);
          ta.select();
          document.execCommand('copy');
          ta.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? t('common.copied') : (props.label ?? t('common.copy'))}
    </button>
  );
}

export function Card(props: { title?: string; children: ComponentChildren; class?: string; actions?: ComponentChildren }) {
  return (
    <section class={`card ${props.class ?? ''}`} aria-label={props.title}>
      {(props.title || props.actions) && (
        <div class="card-head">
          {props.title && <h2>{props.title}</h2>}
          {props.actions}
        </div>
      )}
      {props.children}
    </section>
  );
}

/** Tabs with roving focus (arrow keys), as WAI-ARIA describes. */
export function Tabs<K extends string>(props: { tabs: { key: K; label: string }[]; value: K; onChange: (k: K) => void; label: string }) {
  return (
    <div class="tabs" role="tablist" aria-label={props.label}>
      {props.tabs.map((tab, i) => (
        <button
          type="button"
          role="tab"
          id={`tab-${tab.key}`}
          aria-selected={tab.key === props.value}
          tabIndex={tab.key === props.value ? 0 : -1}
          onClick={() => props.onChange(tab.key)}
          onKeyDown={(e) => {
            const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
            if (!d) return;
            const next = props.tabs[(i + d + props.tabs.length) % props.tabs.length];
            props.onChange(next.key);
            (e.currentTarget.parentElement?.querySelector(`#tab-${next.key}`) as HTMLElement | null)?.focus();
          }}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}
