import { defineDict } from '../../i18n/define';

export default defineDict('profile', {
  en: {
    title: 'Profile', account: 'Your account', username: 'Username', email: 'Email', language: 'Language', saved: 'Profile saved',
    appearance: 'Appearance', theme: 'Theme', themeServer: 'Server default ({theme})', theme_default: 'Default', theme_pro: 'Pro',
    themeHint: 'Dark mode follows the setting of your system.', themeSaved: 'Theme saved',
    password: 'Password', current: 'Current password', next: 'New password', nextHint: 'At least 8 characters.', change: 'Change password',
    passwordChanged: 'Password changed. Your other sessions have been signed out.',
    server: 'Server-wide default', defaultTheme: 'Default theme for everyone', defaultThemeHint: 'Used by everyone who has not chosen a theme.',
    defaultSaved: 'Default theme saved',
  },
  de: {
    title: 'Profil', account: 'Ihr Konto', username: 'Benutzername', email: 'E-Mail', language: 'Sprache', saved: 'Profil gespeichert',
    appearance: 'Darstellung', theme: 'Design', themeServer: 'Server-Standard ({theme})', theme_default: 'Standard', theme_pro: 'Pro',
    themeHint: 'Der dunkle Modus folgt der Einstellung Ihres Systems.', themeSaved: 'Design gespeichert',
    password: 'Passwort', current: 'Aktuelles Passwort', next: 'Neues Passwort', nextHint: 'Mindestens 8 Zeichen.', change: 'Passwort ändern',
    passwordChanged: 'Passwort geändert. Ihre anderen Sitzungen wurden abgemeldet.',
    server: 'Standard für alle', defaultTheme: 'Standard-Design für alle', defaultThemeHint: 'Gilt für alle, die kein eigenes Design gewählt haben.',
    defaultSaved: 'Standard-Design gespeichert',
  },
});
