import { defineDict } from '../../i18n/define';

export default defineDict('tokens', {
  en: {
    title: 'API tokens', create: 'Create token', createTitle: 'New API token', name: 'Name', scopes: 'Scopes', expires: 'Expires',
    expiresHint: 'Leave empty for a token that does not expire.', user: 'Bound to user', userHint: 'Profile endpoints act as this user.',
    peer: 'Bound to peer', peerHint: 'For client tokens: the peer this token belongs to.', noBinding: 'No binding',
    hint: 'Hint', lastUsed: 'Last used', created: 'Created', fingerprint: 'Machine fingerprint', bound: 'bound', notBound: 'not bound',
    resetFingerprint: 'Reset fingerprint', resetConfirm: 'Reset the machine binding of {name}? The next machine that uses it binds again.',
    resetDone: 'Fingerprint binding of {name} reset', revoke: 'Delete', revokeConfirm: 'Delete the token {name}? Clients using it are refused at once.',
    revoked: 'Token {name} deleted', expired: 'expired', never: 'never',
    emptyTitle: 'No API tokens yet', emptyText: 'Create a token to use the API from scripts, the gateway or the client.',
    createdTitle: 'Token created', onceWarning: 'Copy the token now. It is shown only this once and cannot be retrieved later.',
    tokenLabel: 'Your new token', done: 'Done, I have copied it',
    scope_full_access: 'Full access', scope_read_only: 'Read only (every GET)', scope_peers: 'Peers, groups, tags, gateways',
    scope_routes: 'Routes', scope_settings: 'Settings', scope_webhooks: 'Webhooks', scope_logs: 'Logs', scope_system: 'System (WireGuard, Caddy)',
    scope_client: 'Client (desktop client)', scope_gateway: 'Gateway',
  },
  de: {
    title: 'API-Tokens', create: 'Token anlegen', createTitle: 'Neues API-Token', name: 'Name', scopes: 'Berechtigungen', expires: 'Läuft ab',
    expiresHint: 'Leer lassen für ein Token ohne Ablaufdatum.', user: 'An Benutzer gebunden', userHint: 'Profil-Endpunkte handeln als dieser Benutzer.',
    peer: 'An Peer gebunden', peerHint: 'Für Client-Tokens: der Peer, zu dem das Token gehört.', noBinding: 'Keine Bindung',
    hint: 'Kennung', lastUsed: 'Zuletzt benutzt', created: 'Angelegt', fingerprint: 'Geräte-Fingerabdruck', bound: 'gebunden', notBound: 'nicht gebunden',
    resetFingerprint: 'Fingerabdruck zurücksetzen', resetConfirm: 'Gerätebindung von {name} zurücksetzen? Das nächste Gerät, das es benutzt, wird neu gebunden.',
    resetDone: 'Gerätebindung von {name} zurückgesetzt', revoke: 'Löschen', revokeConfirm: 'Token {name} löschen? Clients, die es benutzen, werden sofort abgewiesen.',
    revoked: 'Token {name} gelöscht', expired: 'abgelaufen', never: 'nie',
    emptyTitle: 'Noch keine API-Tokens', emptyText: 'Legen Sie ein Token an, um die API aus Skripten, vom Gateway oder vom Client zu nutzen.',
    createdTitle: 'Token angelegt', onceWarning: 'Kopieren Sie das Token jetzt. Es wird nur dieses eine Mal angezeigt und lässt sich später nicht mehr abrufen.',
    tokenLabel: 'Ihr neues Token', done: 'Fertig, ich habe es kopiert',
    scope_full_access: 'Vollzugriff', scope_read_only: 'Nur lesen (jedes GET)', scope_peers: 'Peers, Gruppen, Tags, Gateways',
    scope_routes: 'Routen', scope_settings: 'Einstellungen', scope_webhooks: 'Webhooks', scope_logs: 'Protokolle', scope_system: 'System (WireGuard, Caddy)',
    scope_client: 'Client (Desktop-Client)', scope_gateway: 'Gateway',
  },
});
