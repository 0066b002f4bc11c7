import { defineDict } from '../../i18n/define';

// The exposure of a route (route form section, route list badge): screens/exposure/ExposureSection.tsx.
export default defineDict('exposure', {
  en: {
    legend: 'Exposure',
    hint: 'Internal: only devices in the VPN (the tunnel subnet, or a LAN behind a gateway) reach this route; reach it by name through the tunnel with the internal DNS.',
    exposure: 'Who may reach it',
    public: 'Public: everyone',
    internal: 'Internal: only through the VPN',
    answer: 'Answer for everyone else',
    answerNotFound: '404 page (as if nothing were served here)',
    answerPage: 'A page of your own (status 403)',
    answerRedirect: 'A redirect (302) to another address',
    page: 'Page for outsiders',
    pageHint: 'HTML when it starts with <, otherwise plain text; at most 65,536 characters',
    redirectUrl: 'Redirect to',
    redirectHint: 'An absolute http(s) address, not on this route’s own domain',
    badge: 'Internal',
    badgeTitle: 'Only reachable through the VPN',
  },
  de: {
    legend: 'Erreichbarkeit',
    hint: 'Intern: nur Geräte im VPN (das Tunnel-Subnetz oder ein LAN hinter einem Gateway) erreichen diese Route; über das interne DNS per Name durch den Tunnel.',
    exposure: 'Wer sie erreicht',
    public: 'Öffentlich: alle',
    internal: 'Intern: nur über das VPN',
    answer: 'Antwort für alle anderen',
    answerNotFound: '404-Seite (als würde hier nichts bereitgestellt)',
    answerPage: 'Eine eigene Seite (Status 403)',
    answerRedirect: 'Eine Weiterleitung (302) zu einer anderen Adresse',
    page: 'Seite für Außenstehende',
    pageHint: 'HTML, wenn sie mit < beginnt, sonst reiner Text; höchstens 65.536 Zeichen',
    redirectUrl: 'Weiterleiten zu',
    redirectHint: 'Eine absolute http(s)-Adresse, nicht auf der eigenen Domain dieser Route',
    badge: 'Intern',
    badgeTitle: 'Nur über das VPN erreichbar',
  },
});
