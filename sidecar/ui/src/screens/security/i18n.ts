import { defineDict } from '../../i18n/define';

export default defineDict('security', {
  en: {
    title: 'Security', lockout: 'Sign-in lockout', lockoutText: 'After this many failed sign-ins in a row an account is locked for the given time.',
    maxAttempts: 'Failed attempts before the lock', duration: 'Lock duration (minutes)', saved: 'Lockout settings saved',
    locked: 'Locked accounts', kind_admin: 'Admin UI', kind_route_auth: 'Route sign-in', kind: 'Sign-in of', account: 'Account', until: 'Locked until',
    unlock: 'Unlock', unlocked: '{name} unlocked', noneLocked: 'No account is locked', noneLockedText: 'Accounts show up here when they reach the limit of failed sign-ins.',
  },
  de: {
    title: 'Sicherheit', lockout: 'Anmeldesperre', lockoutText: 'Nach so vielen fehlgeschlagenen Anmeldungen in Folge wird ein Konto für die angegebene Zeit gesperrt.',
    maxAttempts: 'Fehlversuche bis zur Sperre', duration: 'Dauer der Sperre (Minuten)', saved: 'Einstellungen der Anmeldesperre gespeichert',
    locked: 'Gesperrte Konten', kind_admin: 'Admin-Oberfläche', kind_route_auth: 'Routen-Anmeldung', kind: 'Anmeldung an', account: 'Konto', until: 'Gesperrt bis',
    unlock: 'Entsperren', unlocked: '{name} entsperrt', noneLocked: 'Kein Konto ist gesperrt', noneLockedText: 'Konten erscheinen hier, wenn sie die Grenze der Fehlversuche erreichen.',
  },
});
