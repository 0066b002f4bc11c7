// The page a one-time config link opens (GET /c/:token): the peer's name, when the link stops working
// and a download button (a form posting to the same path, which uses the link up). The same page,
// without the button, says why a link no longer works. No script; English or German by
// Accept-Language.
import { escapeHtml, page, type Lang } from '../web/index.js';
import type { LinkLookup } from './service.js';

const T = {
  en: {
    title: 'WireGuard configuration',
    intro: (peer: string) => `This link gives you the WireGuard configuration of "${peer}", once.`,
    until: (at: string) => `It works until ${at} (UTC). The download uses it up.`,
    how: 'Import the file in the WireGuard app (Add tunnel → Import from file). Keep it private: it holds the tunnel key.',
    download: 'Download the configuration',
    gone: {
      used: 'This link was already used: its configuration was downloaded. Ask your administrator for a new link.',
      expired: 'This link has expired. Ask your administrator for a new link.',
      revoked: 'This link was withdrawn by an administrator. Ask them for a new link.',
      unknown: 'This link is not valid. Check that it was copied completely, or ask your administrator for a new link.',
    },
  },
  de: {
    title: 'WireGuard-Konfiguration',
    intro: (peer: string) => `Über diesen Link erhalten Sie einmalig die WireGuard-Konfiguration von „${peer}“.`,
    until: (at: string) => `Er gilt bis ${at} (UTC). Der Download verbraucht ihn.`,
    how: 'Importieren Sie die Datei in der WireGuard-App (Tunnel hinzufügen → Aus Datei importieren). Geben Sie sie nicht weiter: sie enthält den Tunnel-Schlüssel.',
    download: 'Konfiguration herunterladen',
    gone: {
      used: 'Dieser Link wurde bereits verwendet: die Konfiguration wurde heruntergeladen. Bitten Sie Ihren Administrator um einen neuen Link.',
      expired: 'Dieser Link ist abgelaufen. Bitten Sie Ihren Administrator um einen neuen Link.',
      revoked: 'Dieser Link wurde von einem Administrator zurückgezogen. Bitten Sie um einen neuen Link.',
      unknown: 'Dieser Link ist ungültig. Prüfen Sie, ob er vollständig kopiert wurde, oder bitten Sie Ihren Administrator um einen neuen Link.',
    },
  },
} satisfies Record<Lang, unknown>;

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** The page of a link (pure). */
export function renderLinkPage(lang: Lang, found: LinkLookup, action: string): string {
  const t = T[lang];
  if (found.state !== 'active')
    return page(lang, t.title, `<main><h1>${t.title}</h1><p class="err" role="alert">${escapeHtml(t.gone[found.state])}</p></main>`);
  return page(
    lang,
    t.title,
    `<main><h1>${t.title}</h1><p>${escapeHtml(t.intro(found.peerName))}</p><p>${escapeHtml(t.until(when(Number(found.row.expires_at))))}</p>
<form method="post" action="${escapeHtml(action)}"><button type="submit">${t.download}</button></form><p><small>${escapeHtml(t.how)}</small></p></main>`,
  );
}
