import { defineDict } from '../../i18n/define';

export default defineDict('smtp', {
  en: {
    title: 'Email (SMTP)', server: 'Mail server', intro: 'Gatehouse sends mail (two-factor codes, notifications) through this server.',
    notConfigured: 'No mail server is set up yet: fill in the form and save, then send a test mail.',
    host: 'Host', port: 'Port', secure: 'TLS from the start (SMTPS, usually port 465)', secureHint: 'Without it STARTTLS is used when the server offers it.',
    user: 'User name', password: 'Password', passwordKeep: 'Leave empty to keep the stored password.', passwordSet: 'A password is stored.',
    removePassword: 'Remove the stored password', from: 'Sender', fromHint: 'user@example.com or "Name <user@example.com>"', saved: 'SMTP settings saved',
    test: 'Test mail', testIntro: 'Sends a test mail with the saved settings.', to: 'Recipient', send: 'Send test mail', sending: 'Sending…',
    sent: 'Test mail sent to {to}', saveFirst: 'Save the settings first.',
  },
  de: {
    title: 'E-Mail (SMTP)', server: 'Mailserver', intro: 'Gatehouse verschickt E-Mails (Zwei-Faktor-Codes, Benachrichtigungen) über diesen Server.',
    notConfigured: 'Noch kein Mailserver eingerichtet: Formular ausfüllen und speichern, dann eine Testmail senden.',
    host: 'Host', port: 'Port', secure: 'TLS von Anfang an (SMTPS, meist Port 465)', secureHint: 'Ohne diese Option wird STARTTLS benutzt, wenn der Server es anbietet.',
    user: 'Benutzername', password: 'Passwort', passwordKeep: 'Leer lassen, um das gespeicherte Passwort zu behalten.', passwordSet: 'Ein Passwort ist gespeichert.',
    removePassword: 'Gespeichertes Passwort entfernen', from: 'Absender', fromHint: 'user@example.com oder "Name <user@example.com>"', saved: 'SMTP-Einstellungen gespeichert',
    test: 'Testmail', testIntro: 'Sendet eine Testmail mit den gespeicherten Einstellungen.', to: 'Empfänger', send: 'Testmail senden', sending: 'Wird gesendet…',
    sent: 'Testmail an {to} gesendet', saveFirst: 'Speichern Sie zuerst die Einstellungen.',
  },
});
