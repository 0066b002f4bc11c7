// Runs before the first paint (a blocking script in index.html's head): the colour scheme and theme
// the user last chose in this browser, so the page never flashes in the wrong colours while the app
// loads. localStorage 'gatehouse.scheme' is 'system' (or unset: follow the operating system), 'light'
// or 'dark'; <html data-scheme> is the resolved 'light' or 'dark' the stylesheet keys on. src/theme.ts
// owns both choices once the app runs (and follows a system change while 'system' is chosen).
(function () {
  var root = document.documentElement;
  var pref = null;
  var theme = null;
  try {
    pref = localStorage.getItem('gatehouse.scheme');
    theme = localStorage.getItem('gatehouse.theme');
  } catch (e) {
    /* storage blocked: follow the system */
  }
  var dark = pref === 'dark' || (pref !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  root.dataset.scheme = dark ? 'dark' : 'light';
  if (theme === 'default' || theme === 'pro') root.dataset.theme = theme;
})();
