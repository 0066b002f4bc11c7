// Texts of the route-auth login pages and the login-code mail, German and English.
import { escapeHtml } from '../index.js';

export type Lang = 'en' | 'de';

export const T = {
  en: {
    signIn: 'Sign in',
    signInTo: 'Sign in to',
    signInInstead: 'Sign in with an account instead',
    email: 'Email address',
    account: 'Email or username',
    password: 'Password',
    code: 'Code',
    emailCodeHint: 'Enter the 6-digit code we sent by email.',
    totpHint: 'Enter the 6-digit code from your authenticator app.',
    sendCode: 'Send code',
    resend: 'Send a new code',
    verify: 'Continue',
    startOver: 'Start over',
    signOut: 'Sign out',
    signOutQuestion: 'Sign out of this site on this device?',
    signedOut: 'You have been signed out.',
    signInWith: 'Sign in with',
    tryAgain: 'Try again',
    seenEmail: 'Email address from the sign-in service',
    seenGroups: 'Groups',
    none: '(none)',
    providerSaid: 'The sign-in service said',
    errors: {
      invalid: 'The sign-in details are not correct.',
      code_invalid: 'The code is not correct or has expired.',
      locked: 'Too many failed attempts. Sign-in is locked for a while.',
      totp_not_ready: 'Sign-in with an authenticator app has not been set up for this site yet.',
      expired: 'The sign-in took too long. Please start again.',
      mail_failed: 'The code could not be sent. Please try again later.',
      csrf: 'The form expired. Please try again.',
      rate_limited: 'Too many attempts from your network. Please wait a few minutes.',
      forbidden: 'Access from your network is not allowed.',
      not_configured: 'No sign-in is configured for this address.',
      no_email: 'Your account has no email address for the sign-in code. Ask the administrator.',
      share_unknown: 'This share link is not valid for this site. Check that you copied all of it, or ask whoever sent it.',
      share_expired: 'This share link has expired. Ask whoever sent it for a new one.',
      share_used_up: 'This share link has been used as many times as it allows. Ask whoever sent it for a new one.',
      share_revoked: 'This share link was revoked and no longer opens this site. Ask whoever sent it for a new one.',
      oidc_unavailable: 'Sign-in through the sign-in service is not available for this site right now. Ask the administrator.',
      oidc_state: 'This sign-in was not started in this browser, or was already used. Please start again.',
      oidc_failed: 'The sign-in service did not confirm the sign-in. Please start again.',
      oidc_not_allowed:
        'You signed in, but your account is not allowed on this site: neither its (verified) email address nor one of its groups is on the list of this site. Ask the administrator.',
    },
    notices: {
      code_sent: 'If the address is registered, a code has been sent to it. It is valid for 10 minutes.',
      code_wait: 'A code was sent less than a minute ago. Please check your inbox or wait a moment.',
      enter_totp: 'Password accepted. Now enter the code from your authenticator app.',
      oidc_totp: 'Signed in. Now enter the code from the authenticator app of this site.',
      share_preview: 'A shared link to this site. Open it in a browser to continue.',
    },
  },
  de: {
    signIn: 'Anmelden',
    signInTo: 'Anmelden bei',
    signInInstead: 'Stattdessen mit einem Konto anmelden',
    email: 'E-Mail-Adresse',
    account: 'E-Mail-Adresse oder Benutzername',
    password: 'Passwort',
    code: 'Code',
    emailCodeHint: 'Geben Sie den 6-stelligen Code aus der E-Mail ein.',
    totpHint: 'Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App ein.',
    sendCode: 'Code senden',
    resend: 'Neuen Code senden',
    verify: 'Weiter',
    startOver: 'Neu beginnen',
    signOut: 'Abmelden',
    signOutQuestion: 'Auf diesem Gerät von dieser Seite abmelden?',
    signedOut: 'Sie wurden abgemeldet.',
    signInWith: 'Anmelden mit',
    tryAgain: 'Erneut versuchen',
    seenEmail: 'E-Mail-Adresse vom Anmeldedienst',
    seenGroups: 'Gruppen',
    none: '(keine)',
    providerSaid: 'Der Anmeldedienst meldete',
    errors: {
      invalid: 'Die Anmeldedaten sind nicht korrekt.',
      code_invalid: 'Der Code ist falsch oder abgelaufen.',
      locked: 'Zu viele Fehlversuche. Die Anmeldung ist vorübergehend gesperrt.',
      totp_not_ready: 'Die Anmeldung per Authenticator-App ist für diese Seite noch nicht eingerichtet.',
      expired: 'Die Anmeldung hat zu lange gedauert. Bitte beginnen Sie neu.',
      mail_failed: 'Der Code konnte nicht gesendet werden. Bitte versuchen Sie es später erneut.',
      csrf: 'Das Formular ist abgelaufen. Bitte versuchen Sie es erneut.',
      rate_limited: 'Zu viele Versuche aus Ihrem Netz. Bitte warten Sie einige Minuten.',
      forbidden: 'Der Zugriff aus Ihrem Netz ist nicht erlaubt.',
      not_configured: 'Für diese Adresse ist keine Anmeldung eingerichtet.',
      no_email: 'Ihr Konto hat keine E-Mail-Adresse für den Anmeldecode. Wenden Sie sich an die Administration.',
      share_unknown:
        'Dieser Freigabelink gilt nicht für diese Seite. Prüfen Sie, ob Sie ihn vollständig kopiert haben, oder fragen Sie die Person, die ihn geschickt hat.',
      share_expired: 'Dieser Freigabelink ist abgelaufen. Bitten Sie die Person, die ihn geschickt hat, um einen neuen.',
      share_used_up: 'Dieser Freigabelink wurde so oft geöffnet, wie er erlaubt. Bitten Sie die Person, die ihn geschickt hat, um einen neuen.',
      share_revoked: 'Dieser Freigabelink wurde widerrufen und öffnet diese Seite nicht mehr. Bitten Sie die Person, die ihn geschickt hat, um einen neuen.',
      oidc_unavailable: 'Die Anmeldung über den Anmeldedienst ist für diese Seite gerade nicht verfügbar. Wenden Sie sich an die Administration.',
      oidc_state: 'Diese Anmeldung wurde nicht in diesem Browser begonnen oder wurde schon verwendet. Bitte beginnen Sie neu.',
      oidc_failed: 'Der Anmeldedienst hat die Anmeldung nicht bestätigt. Bitte beginnen Sie neu.',
      oidc_not_allowed:
        'Sie sind angemeldet, aber Ihr Konto ist für diese Seite nicht zugelassen: weder seine (bestätigte) E-Mail-Adresse noch eine seiner Gruppen steht auf der Liste dieser Seite. Wenden Sie sich an die Administration.',
    },
    notices: {
      code_sent: 'Falls die Adresse registriert ist, wurde ein Code an sie gesendet. Er ist 10 Minuten gültig.',
      code_wait: 'Vor weniger als einer Minute wurde bereits ein Code gesendet. Bitte prüfen Sie Ihr Postfach oder warten Sie kurz.',
      enter_totp: 'Passwort korrekt. Geben Sie jetzt den Code aus Ihrer Authenticator-App ein.',
      oidc_totp: 'Angemeldet. Geben Sie jetzt den Code aus der Authenticator-App dieser Seite ein.',
      share_preview: 'Ein Freigabelink zu dieser Seite. Öffnen Sie ihn in einem Browser, um fortzufahren.',
    },
  },
} as const;

export type ErrorKey = keyof (typeof T)['en']['errors'];
export type NoticeKey = keyof (typeof T)['en']['notices'];

/** The login-code mail. */
export function loginMail(
  lang: Lang,
  o: { code: string; domain: string; title: string | null; minutes: number },
): { subject: string; text: string; html: string } {
  const site = o.title || o.domain;
  if (lang === 'de') {
    const subject = `Ihr Anmeldecode für ${site}: ${o.code}`;
    const text = `Ihr Anmeldecode für ${site} (${o.domain}) lautet:\n\n    ${o.code}\n\nEr ist ${o.minutes} Minuten gültig und kann einmal verwendet werden.\nFalls Sie sich nicht anmelden wollten, ignorieren Sie diese E-Mail.\n`;
    const html = `<p>Ihr Anmeldecode für <strong>${escapeHtml(site)}</strong> (${escapeHtml(o.domain)}) lautet:</p><p style="font-size:1.6em;letter-spacing:.2em"><strong>${o.code}</strong></p><p>Er ist ${o.minutes} Minuten gültig und kann einmal verwendet werden. Falls Sie sich nicht anmelden wollten, ignorieren Sie diese E-Mail.</p>`;
    return { subject, text, html };
  }
  const subject = `Your sign-in code for ${site}: ${o.code}`;
  const text = `Your sign-in code for ${site} (${o.domain}) is:\n\n    ${o.code}\n\nIt is valid for ${o.minutes} minutes and can be used once.\nIf you did not try to sign in, ignore this email.\n`;
  const html = `<p>Your sign-in code for <strong>${escapeHtml(site)}</strong> (${escapeHtml(o.domain)}) is:</p><p style="font-size:1.6em;letter-spacing:.2em"><strong>${o.code}</strong></p><p>It is valid for ${o.minutes} minutes and can be used once. If you did not try to sign in, ignore this email.</p>`;
  return { subject, text, html };
}
