// Start: who is signed in (a 401 sends the browser to /login?next=...), language and theme, then
// the app and the live event stream.
import { render } from 'preact';
import './styles.css';
import { App } from './app';
import { startLive } from './live';
import { loadSession } from './session';
import { ApiError } from './api';

const root = document.getElementById('app')!;

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
