// Themes `default` and `pro`, each with a light and a dark variant that follows the system
// setting (CSS prefers-color-scheme). The user's own choice (PUT /settings/theme) wins over the
// server-wide default (PUT /settings/default-theme); null means "use the default".
import { createStore } from './store';

export type Theme = 'default' | 'pro';
export const THEMES: Theme[] = ['default', 'pro'];
export const serverTheme = createStore<Theme>('default');
export const userTheme = createStore<Theme | null>(null);

function apply(): void {
  document.documentElement.dataset.theme = userTheme.get() ?? serverTheme.get();
}
serverTheme.subscribe(apply);
userTheme.subscribe(apply);
apply();
