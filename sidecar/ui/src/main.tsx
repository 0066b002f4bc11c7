// Start: who is signed in (a 401 sends the browser to /login?next=...), language and theme, then
// the app and the live event stream.
import { render } from 'preact';
import './styles.css';
import { App } from './app';
import { startLive } from './live';
import { loadSession } from './session';
import { ApiError } from './api';
import { findScreen } from './screens/registry';

const root = document.getElementById('app')!;

// The first screen's code loads while the session is asked for (import() is cached: the router's
// own load later resolves at once). A failure here is shown by the router, not here.
findScreen(location.pathname)
  ?.screen.load()
  .catch(() => {});

loadSession().then(
  () => {
    render(<App />, root);
    startLive();
  },
  (err) => {
    if (err instanceof ApiError && err.status === 401) return; // redirecting to the sign-in page
    root.textContent = `Gatehouse could not start: ${err?.message ?? err}`;
  },
);
