// The page of a refused sign-in through an OpenID Connect provider (oidc/flow.ts), server-rendered
// like the sign-in page (no script), in German or English by Accept-Language: it says why, what the
// provider said about the person where that helps (name, e-mail address, groups), and links back to
// the sign-in page.
import { escapeHtml, page, type Lang } from '../web/index.js';
import { nextParam } from '../auth/next.js';
import type { RefusalReason, SignInRefused } from './service.js';

const T = {
  en: {
    title: 'Sign-in refused',
    back: 'Back to the sign-in page',
    seen: 'The provider named you',
    email: 'e-mail',
    groups: 'groups',
    none: 'none',
    reasons: {
      state_invalid:
        'This sign-in answer does not belong to a sign-in started in this browser, or it was used already (a tampered or replayed link). Start the sign-in again.',
      expired: 'The sign-in took too long. Start it again.',
      provider_gone: 'This sign-in provider does not exist any more or is disabled.',
      provider_error: 'The identity provider refused the sign-in.',
      provider_unreachable: 'The identity provider cannot be reached right now. Try again later, or sign in with your password.',
      exchange_failed:
        'The identity provider did not confirm this sign-in (the code was used already, has expired, or the answer did not check out). Start the sign-in again.',
      no_mapping:
        'Your account at the identity provider matches none of the groups or e-mail addresses that may sign in here. Ask an admin to map one of your groups or your e-mail address to a role.',
      no_account:
        'No account here is linked to your identity, and accounts are not created automatically for this provider. Ask an admin to create your account with your e-mail address.',
      email_unverified:
        'An account here has your e-mail address, but the identity provider does not confirm that the address is verified, so it is not linked. Verify your address at the provider, or ask an admin.',
      locked: 'Too many failed attempts: this account is locked for a while.',
    } satisfies Record<RefusalReason, string>,
  },
  de: {
    title: 'Anmeldung abgelehnt',
    back: 'Zurück zur Anmeldung',
    seen: 'Der Anbieter nannte Sie',
    email: 'E-Mail',
    groups: 'Gruppen',
    none: 'keine',
    reasons: {
      state_invalid:
        'Diese Antwort gehört zu keiner Anmeldung, die in diesem Browser begonnen wurde, oder sie wurde schon verwendet (ein veränderter oder wiederholter Link). Beginnen Sie die Anmeldung neu.',
      expired: 'Die Anmeldung hat zu lange gedauert. Beginnen Sie sie neu.',
      provider_gone: 'Diesen Anmelde-Anbieter gibt es nicht mehr, oder er ist deaktiviert.',
      provider_error: 'Der Identitätsanbieter hat die Anmeldung abgelehnt.',
      provider_unreachable: 'Der Identitätsanbieter ist gerade nicht erreichbar. Versuchen Sie es später oder melden Sie sich mit Ihrem Passwort an.',
      exchange_failed:
        'Der Identitätsanbieter hat diese Anmeldung nicht bestätigt (der Code wurde schon verwendet, ist abgelaufen, oder die Antwort war nicht stimmig). Beginnen Sie die Anmeldung neu.',
      no_mapping:
        'Ihr Konto beim Identitätsanbieter passt zu keiner der Gruppen oder E-Mail-Adressen, die sich hier anmelden dürfen. Bitten Sie einen Admin, eine Ihrer Gruppen oder Ihre E-Mail-Adresse einer Rolle zuzuordnen.',
      no_account:
        'Kein Konto hier ist mit Ihrer Identität verknüpft, und für diesen Anbieter werden Konten nicht automatisch angelegt. Bitten Sie einen Admin, Ihr Konto mit Ihrer E-Mail-Adresse anzulegen.',
      email_unverified:
        'Ein Konto hier hat Ihre E-Mail-Adresse, aber der Identitätsanbieter bestätigt nicht, dass sie verifiziert ist; deshalb wird es nicht verknüpft. Bestätigen Sie Ihre Adresse beim Anbieter oder fragen Sie einen Admin.',
      locked: 'Zu viele Fehlversuche: dieses Konto ist vorübergehend gesperrt.',
    } satisfies Record<RefusalReason, string>,
  },
} satisfies Record<Lang, unknown>;

/** The refusal page (pure: golden-testable). */
export function renderRefusedPage(o: { lang: Lang; refusal: SignInRefused; next?: unknown }): string {
  const t = T[o.lang];
  const d = o.refusal.detail;
  const who =
    o.refusal.reason === 'no_mapping' || o.refusal.reason === 'email_unverified' || o.refusal.reason === 'no_account'
      ? `<p><small>${t.seen}: ${escapeHtml(d.username ?? '')}${d.email ? `, ${t.email} ${escapeHtml(d.email)}` : ''}, ${t.groups}: ${
          d.groups?.length ? escapeHtml(d.groups.join(', ')) : t.none
        }</small></p>`
      : '';
  const said = d.error ? `<p><small>${escapeHtml(d.error)}</small></p>` : '';
  return page(
    o.lang,
    t.title,
    `<main><h1>Gatehouse · ${t.title}</h1><p class="err" role="alert" data-reason="${o.refusal.reason}">${escapeHtml(t.reasons[o.refusal.reason])}</p>${said}${who}
<p><a href="/login${nextParam(o.next, '?')}">${t.back}</a></p></main>`,
  );
}
