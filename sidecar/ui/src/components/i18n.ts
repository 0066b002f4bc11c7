import { defineDict } from '../i18n/define';

export default defineDict('shell', {
  en: {
    skip: 'Skip to content', menu: 'Menu', navLabel: 'Main navigation', sectionMain: 'Overview', sectionAccess: 'Network and access',
    sectionSystem: 'System', sectionAccount: 'Account', language: 'Language', theme: 'Theme', themeDefault: 'Default', themePro: 'Pro',
    themeServer: 'Server default ({theme})', signOut: 'Sign out', signedInAs: 'Signed in as {name}', apiDocs: 'API reference',
    loadFailed: 'The page could not be loaded.', starting: 'Starting…', adminOnly: 'Only administrators can open this page.',
    chartTime: 'Time',
  },
  de: {
    skip: 'Zum Inhalt springen', menu: 'Menü', navLabel: 'Hauptnavigation', sectionMain: 'Übersicht', sectionAccess: 'Netz und Zugriff',
    sectionSystem: 'System', sectionAccount: 'Konto', language: 'Sprache', theme: 'Design', themeDefault: 'Standard', themePro: 'Pro',
    themeServer: 'Server-Vorgabe ({theme})', signOut: 'Abmelden', signedInAs: 'Angemeldet als {name}', apiDocs: 'API-Referenz',
    loadFailed: 'Die Seite konnte nicht geladen werden.', starting: 'Startet…', adminOnly: 'Nur Administratoren können diese Seite öffnen.',
    chartTime: 'Zeit',
  },
});
