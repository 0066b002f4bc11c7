import { defineDict } from '../../i18n/define';

export default defineDict('users', {
  en: {
    title: 'Users', create: 'Create user', createTitle: 'New user', editTitle: 'Edit {name}', username: 'Username', email: 'Email',
    password: 'Password', role: 'Role', language: 'Language', lastLogin: 'Last sign-in', role_admin: 'Administrator', role_user: 'User',
    you: 'you', edit: 'Edit', delete: 'Delete', deleteConfirm: 'Delete the user {name}? Their sessions end at once.', deleted: 'User {name} deleted',
    created: 'User {name} created', saved: 'User {name} saved', resetPassword: 'Reset password',
    resetConfirm: 'Give {name} a new random password? Their current password stops working.', resetTitle: 'New password for {name}',
    resetText: 'Pass this password on to the user. It is shown only once; at their next sign-in they are asked to choose a new one.',
    passwordLabel: 'New password', done: 'Done', mustChange: 'must choose a new password',
    emptyTitle: 'No users', emptyText: 'Create a user so a colleague can sign in.',
  },
  de: {
    title: 'Benutzer', create: 'Benutzer anlegen', createTitle: 'Neuer Benutzer', editTitle: '{name} bearbeiten', username: 'Benutzername', email: 'E-Mail',
    password: 'Passwort', role: 'Rolle', language: 'Sprache', lastLogin: 'Letzte Anmeldung', role_admin: 'Administrator', role_user: 'Benutzer',
    you: 'Sie', edit: 'Bearbeiten', delete: 'Löschen', deleteConfirm: 'Benutzer {name} löschen? Seine Sitzungen enden sofort.', deleted: 'Benutzer {name} gelöscht',
    created: 'Benutzer {name} angelegt', saved: 'Benutzer {name} gespeichert', resetPassword: 'Passwort zurücksetzen',
    resetConfirm: '{name} ein neues Zufallspasswort geben? Das bisherige Passwort funktioniert dann nicht mehr.', resetTitle: 'Neues Passwort für {name}',
    resetText: 'Geben Sie dieses Passwort an den Benutzer weiter. Es wird nur einmal angezeigt; bei der nächsten Anmeldung muss er ein neues wählen.',
    passwordLabel: 'Neues Passwort', done: 'Fertig', mustChange: 'muss ein neues Passwort wählen',
    emptyTitle: 'Keine Benutzer', emptyText: 'Legen Sie einen Benutzer an, damit sich eine Kollegin oder ein Kollege anmelden kann.',
  },
});
