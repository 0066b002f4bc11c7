// The shapes of the admin API the UI reads and sends: types only, inferred from the server's own zod
// schemas (sidecar/src/<folder>/schema.ts through the @server alias), so each shape has one
// definition. `import type` is erased: the bundle holds no server code. Responses are z.infer (what
// the server answers), request bodies z.input (what the server accepts before its defaults and
// transforms). The UI's own form state (what an input holds while it is edited) is not here.
import type { z } from 'zod';
import type { GatewayTrafficStatus, Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import type { StatusDetail } from '@gatehouse/common/gateway-status.js';
import type * as Auth from '@server/auth/schema';
import type * as Backup from '@server/backup/schema';
import type * as ClientApi from '@server/client-api/schema';
import type * as Dashboard from '@server/dashboard/schema';
import type { EventKinds, EventType } from '@server/event-kinds';
import type * as Gateways from '@server/gateways/schema';
import type * as Geoip from '@server/geoip/schema';
import type * as Groups from '@server/groups/schema';
import type * as LicenceApi from '@server/licence/schema';
import type * as Logs from '@server/logs/schema';
import type * as Peers from '@server/peers/schema';
import type * as ConfigLinks from '@server/config-links/schema';
import type * as ShareLinks from '@server/share-links/schema';
import type * as Certificates from '@server/certificates/schema';
import type * as ClusterApi from '@server/cluster/schema';
import type * as Proxy from '@server/proxy/schema';
import type * as Rdp from '@server/rdp/schema';
import type * as Redirects from '@server/redirects/schema';
import type * as RouteAuth from '@server/route-auth/schema';
import type * as Routes from '@server/routes/schema';
import type * as RouteTraffic from '@server/routes/traffic';
import type * as Settings from '@server/settings/schema';
import type * as Smtp from '@server/smtp/schema';
import type * as Metrics from '@server/metrics/schema';
import type * as Oidc from '@server/oidc/schema';
import type * as Tags from '@server/tags/schema';
import type * as Tokens from '@server/tokens/schema';
import type * as Users from '@server/users/schema';
import type * as Webhooks from '@server/webhooks/schema';
import type * as Wireguard from '@server/wireguard/schema';

type Out<S extends z.ZodType> = z.infer<S>;
type In<S extends z.ZodType> = z.input<S>;

/**
 * A request body whose fields K may be sent as null: a number input left empty. The server refuses
 * null there with its own message next to the input (400 fields.<name>), so the form needs no rule.
 */
export type MayBeEmpty<B, K extends keyof B> = Omit<B, K> & { [P in K]?: B[P] | null };

// ---- live events (GET /api/v1/events; the descriptors in event-kinds.ts)
export type LiveType = EventType;
/** The data of a live event of kind K: the kind's payload, with `at` (epoch ms) when it had none. */
export type LivePayload<K extends EventType> = z.infer<EventKinds[K]['payload']> & { at: number };

// ---- session and settings (auth/, settings/)
export type SessionResponse = Out<typeof Auth.sessionResponse>;
export type SecondFactorStatusResponse = Out<typeof Auth.secondFactorStatusResponse>;
export type AccountTotpSetupResponse = Out<typeof Auth.totpSetupResponse>;
export type RecoveryCodesResponse = Out<typeof Auth.recoveryCodesResponse>;
export type SecondFactorResetResponse = Out<typeof Auth.secondFactorResetResponse>;
export type PasskeysResponse = Out<typeof Auth.passkeysResponse>;
export type PasskeyRenamedResponse = Out<typeof Auth.passkeyResponse>;
export type PasskeyOptionsResponse = Out<typeof Auth.passkeyOptionsResponse>;
export type PasskeyRegisteredResponse = Out<typeof Auth.passkeyRegisteredResponse>;
export type SessionUser = Extract<SessionResponse, { kind: 'session' }>['user'];
export type AppSettingsResponse = Out<typeof Settings.appSettingsResponse>;
export type AppSettings = AppSettingsResponse['app'];
export type PublicHost = AppSettings['public_host'];
export type ProfileResponse = Out<typeof Settings.profileResponse>;
export type ProfileBody = In<typeof Settings.profileBody>;
export type PasswordChangeBody = In<typeof Settings.passwordChangeBody>;
export type LockoutResponse = Out<typeof Settings.lockoutResponse>;
export type SecurityBody = In<typeof Settings.securityBody>;
export type NetworkResponse = Out<typeof Settings.networkResponse>;
export type NetworkView = NetworkResponse['network'];
export type NetworkBody = In<typeof Settings.networkBody>;

// ---- users (users/)
export type UsersResponse = Out<typeof Users.usersResponse>;
export type UserView = Out<typeof Users.userView>;
export type CreateUserBody = In<typeof Users.createBody>;
export type UpdateUserBody = In<typeof Users.updateBody>;
export type LockedResponse = Out<typeof Users.lockedResponse>;
export type Locked = LockedResponse['locked'][number];
export type ResetPasswordResponse = Out<typeof Users.resetPasswordResponse>;

// ---- dashboard, system, WireGuard and Caddy status
export type StatsResponse = Out<typeof Dashboard.statsResponse>;
export type TrafficResponse = Out<typeof Dashboard.trafficResponse>;
export type ResourcesResponse = Out<typeof Metrics.resourcesResponse>;
export type WgStatusResponse = Out<typeof Wireguard.wgStatusResponse>;
export type WgRestartResponse = Out<typeof Wireguard.wgRestartResponse>;
export type CaddyStatusResponse = Out<typeof Proxy.caddyStatusResponse>;
export type CaddyReloadResponse = Out<typeof Proxy.caddyReloadResponse>;

// ---- logs (logs/)
export type ActivityResponse = Out<typeof Logs.activityResponse>;
export type RecentResponse = Out<typeof Logs.recentResponse>;
export type ActivityEntry = Out<typeof Logs.activityEntryView>;
export type AccessResponse = Out<typeof Logs.accessResponse>;
export type AccessEntry = Out<typeof Logs.accessEntryView>;

// ---- peers, groups, tags (peers/, groups/, tags/)
export type PeerListResponse = Out<typeof Peers.peerListResponse>;
export type PeerResponse = Out<typeof Peers.peerResponse>;
export type Peer = Out<typeof Peers.peerView>;
export type PeerCreatedResponse = Out<typeof Peers.peerCreatedResponse>;
export type PeerToggleResponse = Out<typeof Peers.peerToggleResponse>;
export type PeerBatchResponse = Out<typeof Peers.peerBatchResponse>;
export type PeerQrResponse = Out<typeof Peers.peerQrResponse>;
export type PeerTrafficResponse = Out<typeof Peers.peerTrafficResponse>;
export type CreatePeerBody = In<typeof Peers.createPeerBody>;
export type UpdatePeerBody = In<typeof Peers.updatePeerBody>;
export type ConfigLinksResponse = Out<typeof ConfigLinks.linksResponse>;
export type ConfigLink = Out<typeof ConfigLinks.linkView>;
export type Certificate = Out<typeof Certificates.certificateView>;
export type CertificatesResponse = Out<typeof Certificates.certificatesResponse>;

// ---- cluster (cluster/)
export type ClusterResponse = Out<typeof ClusterApi.clusterResponse>;
export type ClusterNode = Out<typeof ClusterApi.clusterNodeView>;
export type ClusterNodeRemovedResponse = Out<typeof ClusterApi.clusterNodeRemovedResponse>;
export type CertificateResponse = Out<typeof Certificates.certificateResponse>;
export type CreateCertificateBody = In<typeof Certificates.createCertificateBody>;
export type ConfigLinkCreatedResponse = Out<typeof ConfigLinks.linkCreatedResponse>;
export type CreateConfigLinkBody = In<typeof ConfigLinks.createLinkBody>;
export type ShareLinksResponse = Out<typeof ShareLinks.shareLinksResponse>;
export type ShareLink = Out<typeof ShareLinks.shareLinkView>;
export type ShareLinkCreatedResponse = Out<typeof ShareLinks.shareLinkCreatedResponse>;
export type CreateShareLinkBody = In<typeof ShareLinks.createShareLinkBody>;
export type ShareSettingsResponse = Out<typeof ShareLinks.shareSettingsResponse>;
export type GroupsResponse = Out<typeof Groups.groupsResponse>;
export type GroupResponse = Out<typeof Groups.groupResponse>;
export type Group = Out<typeof Groups.groupView>;
export type GroupBody = In<typeof Groups.createBody>;
export type GroupDeletedResponse = Out<typeof Groups.groupDeletedResponse>;
export type RedirectHostsResponse = Out<typeof Redirects.redirectHostsResponse>;
export type RedirectHostResponse = Out<typeof Redirects.redirectHostResponse>;
export type RedirectHost = Out<typeof Redirects.redirectHostView>;
export type RedirectHostBody = In<typeof Redirects.createBody>;
export type RedirectHostDeletedResponse = Out<typeof Redirects.redirectHostDeletedResponse>;
export type DefaultSiteResponse = Out<typeof Redirects.defaultSiteResponse>;
export type DefaultSite = Out<typeof Redirects.defaultSiteView>;
export type DefaultSiteBody = In<typeof Redirects.defaultSiteBody>;
export type TagsResponse = Out<typeof Tags.tagsResponse>;
export type Tag = Out<typeof Tags.tagView>;
export type TagCreatedResponse = Out<typeof Tags.tagCreatedResponse>;
export type TagRenamedResponse = Out<typeof Tags.tagRenamedResponse>;
export type TagDeletedResponse = Out<typeof Tags.tagDeletedResponse>;

// ---- routes (routes/, route-auth/)
export type RoutesResponse = Out<typeof Routes.routesResponse>;
export type RouteResponse = Out<typeof Routes.routeResponse>;
export type Route = Out<typeof Routes.routeView>;
export type GeoipStatusResponse = Out<typeof Geoip.geoipStatusResponse>;
export type MirrorTarget = Route['mirror_targets'][number];
export type RouteToggleResponse = Out<typeof Routes.routeToggleResponse>;
export type RoutesBatchResponse = Out<typeof Routes.routesBatchResponse>;
export type RoutesBatchBody = In<typeof Routes.batchBody>;
export type CreateRouteBody = In<typeof Routes.createRouteBody>;
export type UpdateRouteBody = In<typeof Routes.updateRouteBody>;
export type RoutePeersResponse = Out<typeof Routes.routePeersResponse>;
export type WizardPeer = Out<typeof Routes.wizardPeer>;
export type RouteChecksResponse = Out<typeof Routes.routeChecksResponse>;
export type RouteCheckResponse = Out<typeof Routes.routeCheckResponse>;
export type RouteCheck = RouteChecksResponse['checks'][number];
export type TraceResponse = Out<typeof Routes.traceResponse>;
export type BreakerResetResponse = Out<typeof Routes.breakerResetResponse>;
export type RouteBackendsResponse = Out<typeof RouteTraffic.routeBackendsResponse>;
export type RouteAuthOrNullResponse = Out<typeof RouteAuth.routeAuthOrNullResponse>;
export type RouteAuthView = Out<typeof RouteAuth.routeAuthView>;
export type RouteAuthBody = In<typeof RouteAuth.routeAuthBody>;
export type TotpSetupResponse = Out<typeof RouteAuth.totpSetupResponse>;

// ---- RDP (rdp/)
export type RdpRoutesResponse = Out<typeof Rdp.rdpRoutesResponse>;
export type RdpRouteResponse = Out<typeof Rdp.rdpRouteResponse>;
export type RdpRoute = Out<typeof Rdp.rdpRouteView>;
export type AccessMode = RdpRoute['access_mode'];
export type MaintenanceWindow = RdpRoute['maintenance_windows'][number];
export type CreateRdpBody = In<typeof Rdp.createRdpBody>;
export type UpdateRdpBody = In<typeof Rdp.updateRdpBody>;
export type RdpToggleResponse = Out<typeof Rdp.rdpToggleResponse>;
export type RdpBatchResponse = Out<typeof Rdp.rdpBatchResponse>;
export type RdpBatchBody = In<typeof Rdp.rdpBatchBody>;
export type PubkeyResponse = Out<typeof Rdp.pubkeyResponse>;
export type MaintenanceResponse = Out<typeof Rdp.maintenanceResponse>;
export type RotationPendingResponse = Out<typeof Rdp.rotationPendingResponse>;
export type RdpStatusResponse = Out<typeof Rdp.rdpStatusResponse>;
export type RdpStatusAllResponse = Out<typeof Rdp.rdpStatusAllResponse>;
export type RdpStatus = Out<typeof Rdp.rdpRouteStatus>;
export type PathCheck = RdpStatus['paths'][number];
export type WolResponse = Out<typeof Rdp.wolResponse>;
export type WakeCycle = Out<typeof Rdp.wakeCycle>;
export type DisconnectAllResponse = Out<typeof Rdp.disconnectAllResponse>;
export type HistoryResponse = Out<typeof Rdp.historyResponse>;
export type RdpSession = Out<typeof Rdp.historyEntry>;

// ---- gateways (gateways/)
type GatewayView = Out<typeof Gateways.gatewayView>;
/**
 * gatewayView declares three fields loosely, as objects, and these types say what they hold: health
 * is the last heartbeat as stored (the companion protocol's heartbeatSchema; one from an older
 * companion may lack fields), traffic the last status report, status_detail a StatusDetail.
 */
export type GatewayHealth = Partial<Heartbeat>;
export type Gateway = Omit<GatewayView, 'health' | 'traffic' | 'status_detail'> & {
  health: GatewayHealth | null;
  traffic: (Partial<GatewayTrafficStatus> & { at: number }) | null;
  status_detail: StatusDetail;
};
export type GatewaysResponse = Omit<Out<typeof Gateways.gatewaysResponse>, 'gateways'> & { gateways: Gateway[] };
export type GatewayRotateResponse = Out<typeof Gateways.gatewayRotateResponse>;

// ---- tokens and desktop clients (tokens/, client-api/)
export type TokenListResponse = Out<typeof Tokens.tokenListResponse>;
export type TokenView = Out<typeof Tokens.tokenView>;
export type TokenCreatedResponse = Out<typeof Tokens.tokenCreatedResponse>;
export type CreateTokenBody = In<typeof Tokens.createTokenBody>;
export type MachinesResponse = Out<typeof ClientApi.machinesResponse>;
export type Machine = Out<typeof ClientApi.machineView>;
export type SplitTunnelResponse = Out<typeof ClientApi.splitTunnelResponse>;

// ---- webhooks (webhooks/)
export type WebhooksResponse = Out<typeof Webhooks.webhooksResponse>;
export type WebhookResponse = Out<typeof Webhooks.webhookResponse>;
export type WebhookView = Out<typeof Webhooks.webhookView>;
export type DeliveryView = Out<typeof Webhooks.deliveryView>;
export type DeliveriesResponse = Out<typeof Webhooks.deliveriesResponse>;
export type WebhookTestResponse = Out<typeof Webhooks.testResponse>;
export type EventKindsResponse = Out<typeof Webhooks.eventKindsResponse>;
export type CreateWebhookBody = In<typeof Webhooks.createWebhookBody>;

// ---- backup (backup/)
export type JobListResponse = Out<typeof Backup.jobListResponse>;
export type JobResponse = Out<typeof Backup.jobResponse>;
export type BackupJob = Out<typeof Backup.jobView>;
export type JobBody = In<typeof Backup.jobCreateBody>;
export type RestoreResponse = Out<typeof Backup.restoreResponse>;

// ---- licence (licence/)
export type LicenceResponse = Out<typeof LicenceApi.licenceResponse>;
export type Licence = Out<typeof LicenceApi.licenceView>;
export type RefreshResponse = Out<typeof LicenceApi.refreshResponse>;

// ---- SMTP (smtp/)
export type SmtpResponse = Out<typeof Smtp.smtpResponse>;
export type SmtpBody = In<typeof Smtp.smtpBody>;

// ---- single sign-on (oidc/)
export type OidcProvidersResponse = Out<typeof Oidc.providersResponse>;
export type OidcProviderResponse = Out<typeof Oidc.providerResponse>;
export type OidcProviderView = Out<typeof Oidc.providerView>;
export type OidcProviderBody = In<typeof Oidc.createProviderBody>;
export type OidcProviderPatch = In<typeof Oidc.updateProviderBody>;
export type OidcTestResponse = Out<typeof Oidc.testResponse>;
