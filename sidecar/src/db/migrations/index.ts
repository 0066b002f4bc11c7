// Ordered list of migrations. Append new ones at the end; never edit one that has shipped.
import type { QueryInterface, Sequelize } from 'sequelize';
import * as m001 from './001_platform.js';
import * as m002 from './002_peers_routes.js';
import * as m003peers from './003_peer_name_indexes.js';
import * as m011routeAuth from './011_route_auth.js';
import * as m020gateways from './020_gateways.js';
import * as m030accessLog from './030_access_log.js';
import * as m031routeChecks from './031_route_checks.js';
import * as m040routeAuthUsers from './040_route_auth_users.js';
import * as m041l4Flags from './041_l4_flags.js';
import * as m004listSort from './004_list_sort_indexes.js';
import * as m005mustChange from './005_user_must_change_password.js';
import * as m050webhooks from './050_webhooks.js';
import * as m052backupJobs from './052_backup_jobs.js';
import * as m060rdp from './060_rdp.js';
import * as m061client from './061_client.js';
import * as m062usernameNocase from './062_username_nocase.js';
import * as m063messageCodes from './063_message_codes.js';
import * as m064peerConfigEndpoint from './064_peer_config_endpoint.js';
import * as m065webhookAllowPrivate from './065_webhook_allow_private.js';
import * as m066peerConfigLinks from './066_peer_config_links.js';
import * as m067routeAuthPendingMethod from './067_route_auth_pending_method.js';
import * as m068redirectHosts from './068_redirect_hosts.js';
import * as m070peerClientAllowedIps from './070_peer_client_allowed_ips.js';
import * as m075routeBackends from './075_route_backends.js';
import * as m073routeGeoFilter from './073_route_geo_filter.js';
import * as m069customCertificates from './069_custom_certificates.js';
import * as m071shareLinks from './071_share_links.js';
import * as m076speedLimits from './076_speed_limits.js';
import * as m074routeExposure from './074_route_exposure.js';
import * as m072accessSchedule from './072_access_schedule.js';
import * as m078adminSecondFactor from './078_admin_second_factor.js';
import * as m079peerQuotas from './079_peer_quotas.js';
import * as m080oidcProviders from './080_oidc_providers.js';
import * as m081userPasskeys from './081_user_passkeys.js';
import * as m084rateLimits from './084_rate_limits.js';
import * as m082routeAuthOidc from './082_route_auth_oidc.js';
import * as m083clusterNodes from './083_cluster_nodes.js';
import * as m086routeWriteIndexes from './086_route_write_indexes.js';
import * as m085routeAuthOidcFlows from './085_route_auth_oidc_flows.js';

export type Migration = {
  name: string;
  up: (qi: QueryInterface, s: Sequelize) => Promise<void>;
  down?: (qi: QueryInterface, s: Sequelize) => Promise<void>;
};

export const migrations: Migration[] = [
  m001,
  m002,
  m003peers,
  m011routeAuth,
  m020gateways,
  m030accessLog,
  m031routeChecks,
  m040routeAuthUsers,
  m041l4Flags,
  m004listSort,
  m005mustChange,
  m050webhooks,
  m052backupJobs,
  m060rdp,
  m061client,
  m062usernameNocase,
  m063messageCodes,
  m064peerConfigEndpoint,
  m065webhookAllowPrivate,
  m066peerConfigLinks,
  m067routeAuthPendingMethod,
  m068redirectHosts,
  m070peerClientAllowedIps,
  m069customCertificates,
  m071shareLinks,
  m076speedLimits,
  m074routeExposure,
  m075routeBackends,
  m072accessSchedule,
  m073routeGeoFilter,
  m078adminSecondFactor,
  m079peerQuotas,
  m080oidcProviders,
  m081userPasskeys,
  m084rateLimits,
  m082routeAuthOidc,
  m083clusterNodes,
  m086routeWriteIndexes,
  m085routeAuthOidcFlows,
];
