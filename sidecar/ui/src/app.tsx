// Picks the screen for the current path, loads its code on first use, and keeps the frame around it.
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ConfirmHost, ToastHost } from './components/dialog';
import { Layout } from './components/layout';
import { EmptyState, ErrorBanner, Link, Spinner } from './components/ui';
import { t, useLang } from './i18n';
import { useLocation } from './router';
import { findScreen, type ScreenProps } from './screens/registry';
import { hasRole } from './session';
import { Writable } from './components/ui';

const cache = new Map<string, ComponentType<ScreenProps>>();
let firstScreen = true;

export function App() {
  useLang();
  const { path, query } = useLocation();
  const found = findScreen(path);
  const id = found?.screen.id ?? null;
  const [Comp, setComp] = useState<ComponentType<ScreenProps> | null>(() => (id ? (cache.get(id) ?? null) : null));
  const [failed, setFailed] = useState<Error | null>(null);
  useEffect(() => {
    setFailed(null);
    if (!found) return;
    const hit = cache.get(found.screen.id);
    if (hit) {
      setComp(() => hit);
      return;
    }
    setComp(null);
    let gone = false;
    found.screen.load().then(
      (m) => {
        cache.set(found.screen.id, m.default);
        if (!gone) setComp(() => m.default);
      },
      (e) => {
        if (!gone) setFailed(e);
      },
    );
    return () => {
      gone = true;
    };
  }, [id]);
  useEffect(() => {
    document.title = `${found ? t(found.screen.title) : t('common.notFoundTitle')} · Gatehouse`;
    // Tell assistive technology that the page changed: focus the new page's heading (not on the
    // first page load, where the browser's own focus order starts with the skip link).
    if (!Comp) return;
    if (firstScreen) {
      firstScreen = false;
      return;
    }
    requestAnimationFrame(() => (document.getElementById('page-title') as HTMLElement | null)?.focus({ preventScroll: true }));
  }, [path, Comp]);
  let body;
  if (!found) {
    body = (
      <>
        <h1 id="page-title" tabIndex={-1}>
          {t('common.notFoundTitle')}
        </h1>
        <EmptyState title={t('common.notFound')}>
          <Link class="btn" href="/">
            {t('common.home')}
          </Link>
        </EmptyState>
      </>
    );
  } else if (!hasRole(found.screen.viewRole ?? 'user')) {
    body = (
      <>
        <h1 id="page-title" tabIndex={-1}>
          {t(found.screen.title)}
        </h1>
        <ErrorBanner error={t('shell.adminOnly')} />
      </>
    );
  } else if (failed) {
    body = <ErrorBanner error={t('shell.loadFailed')} onRetry={() => location.reload()} />;
  } else if (!Comp || cache.get(found.screen.id) !== Comp) {
    body = <Spinner />;
  } else {
    body = (
      <Writable.Provider value={hasRole(found.screen.writeRole ?? 'admin')}>
        <Comp params={found.params} query={query} />
      </Writable.Provider>
    );
  }
  return (
    <>
      <Layout active={id} readOnly={!!found && hasRole(found.screen.viewRole ?? 'user') && !hasRole(found.screen.writeRole ?? 'admin')}>
        {body}
      </Layout>
      <ConfirmHost />
      <ToastHost />
    </>
  );
}
