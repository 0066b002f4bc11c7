// The API's response types for the tests, inferred from the server's zod schemas (as the admin app's
// sidecar/ui/src/protocol.ts does): tests name them where they read a body or a list entry.
import type { z } from 'zod';
import type * as Backup from '../../src/backup/schema.js';
import type * as ClientApi from '../../src/client-api/schema.js';
import type * as Dns from '../../src/dns/schema.js';
import type * as Gateways from '../../src/gateways/schema.js';
import type * as Groups from '../../src/groups/schema.js';
import type * as Logs from '../../src/logs/schema.js';
import type * as Peers from '../../src/peers/schema.js';
import type * as Rdp from '../../src/rdp/schema.js';
import type * as RouteAuth from '../../src/route-auth/schema.js';
import type * as Routes from '../../src/routes/schema.js';
import type * as Tags from '../../src/tags/schema.js';
import type * as Tokens from '../../src/tokens/schema.js';
import type * as Users from '../../src/users/schema.js';
import type * as Proxy from '../../src/proxy/schema.js';
import type * as AccessWindows from '../../src/access-windows/schema.js';

import type { Heartbeat } from '@gatehouse/common/gateway-protocol.js';

type Out<S extends z.ZodType> = z.infer<S>;

export type ActivityEntry = Out<typeof Logs.activityEntryView>;
export type AccessEntry = Out<typeof Logs.accessEntryView>;
export type Peer = Out<typeof Peers.peerView>;
export type PeerBatchResult = Out<typeof Peers.peerBatchResponse>['results'][number];
export type Group = Out<typeof Groups.groupView>;
export type Tag = Out<typeof Tags.tagView>;
export type Route = Out<typeof Routes.routeView>;
export type RouteCheck = Out<typeof Routes.routeChecksResponse>['checks'][number];
export type TraceRequest = Out<typeof Routes.traceResponse>['requests'][number];
export type RouteAuthUser = Out<typeof RouteAuth.routeAuthView>['users'][number];
export type Token = Out<typeof Tokens.tokenView>;
export type User = Out<typeof Users.userView>;
export type Locked = Out<typeof Users.lockedResponse>['locked'][number];
export type Gateway = Out<typeof Gateways.gatewayView>;
export type GatewayConfigRoute = Out<typeof Gateways.gatewayConfigResponse>['routes'][number];
export type GatewayListener = Out<typeof Gateways.gatewayConfigResponse>['tcp_listeners'][number];
export type Service = Out<typeof ClientApi.serviceView>;
export type ExternalAddress = Out<typeof ClientApi.dnsCheckResponse>['addresses'][number];
export type DnsRecords = Out<typeof Dns.dnsRecordsResponse>;
export type BackupJob = Out<typeof Backup.jobView>;
export type PlanItem = Out<typeof Backup.restoreResponse>['plan'][string]['created'][number];
export type RdpRoute = Out<typeof Rdp.rdpRouteView>;
export type RdpSession = Out<typeof Rdp.historyEntry>;
export type RdpStatus = Out<typeof Rdp.rdpRouteStatus>;
export type PathCheck = Out<typeof Rdp.rdpRouteStatus>['paths'][number];
export type AccessSchedule = Out<typeof AccessWindows.accessScheduleView>;
export type AccessState = Out<typeof AccessWindows.accessState>;
export type MaintenanceWindow = Out<typeof Rdp.rdpRouteView>['maintenance_windows'][number];
export type RouteReachability = Heartbeat['route_reachability'][number];
export type ListenerStatus = Heartbeat['tcp_listeners'][number];

// whole response bodies, for helpers that name the body of one endpoint (scripts/bench)
export type PeerListBody = Out<typeof Peers.peerListResponse>;
export type PeerCreatedBody = Out<typeof Peers.peerCreatedResponse>;
export type RouteBody = Out<typeof Routes.routeResponse>;
export type RouteListBody = Out<typeof Routes.routesResponse>;
export type TokenCreatedBody = Out<typeof Tokens.tokenCreatedResponse>;
export type CaddyStatusBody = Out<typeof Proxy.caddyStatusResponse>;
export type GatewayListBody = Out<typeof Gateways.gatewaysResponse>;
