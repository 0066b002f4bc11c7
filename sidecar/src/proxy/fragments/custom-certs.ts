// Custom certificates in the Caddy configuration (pure): the certificates that routes name
// (routes.certificate_id, src/certificates) are loaded into Caddy's stock tls app with
// `certificates.load_pem`, each tagged gatehouse_cert_<id>; the HTTPS server gets one TLS connection
// policy per certificate that picks it by that tag for its routes' names (SNI), ahead of the
// catch-all policy; and an automation policy for exactly those names, without on-demand issuance,
// so that Caddy neither obtains a certificate for them at a handshake nor manages them up front
// (they are left out of `certificates.automate`). This is the JSON `caddy adapt` makes of a site
// with `tls cert.pem key.pem`. docs/guides/routes.md "Custom certificates".
import type { Route } from '../../routes/model.js';
import type { Json } from '../caddy-json.js';
import type { CustomCertificatePem } from '../render-context.js';

/** A certificate the routes use, with the host names it is served for. */
export interface CustomCertUse {
  id: number;
  certificate_pem: string;
  private_key_pem: string;
  /** the HTTPS host names of the routes using it, sorted */
  hosts: string[];
}

export interface CustomCerts {
  uses: CustomCertUse[];
  /** the routes that render with a custom certificate (a change of one needs a full load) */
  routeIds: number[];
}

export const customCertTag = (id: number) => `gatehouse_cert_${id}`;

/**
 * Which enabled HTTPS routes use which loaded certificate. A route whose certificate is not in
 * `certs` (its key did not open) keeps the automatic certificate.
 */
export function customCertUses(routes: readonly Route[], certs: ReadonlyMap<number, CustomCertificatePem> | undefined): CustomCerts {
  if (!certs?.size) return { uses: [], routeIds: [] };
  const byId = new Map<number, CustomCertUse>();
  const routeIds: number[] = [];
  for (const r of routes) {
    if (!r.enabled || r.route_type !== 'http' || !r.https_enabled || r.certificate_id === null) continue;
    const cert = certs.get(r.certificate_id);
    if (!cert) continue;
    let use = byId.get(cert.id);
    if (!use) byId.set(cert.id, (use = { id: cert.id, certificate_pem: cert.certificate_pem, private_key_pem: cert.private_key_pem, hosts: [] }));
    use.hosts.push(r.domain);
    routeIds.push(r.id);
  }
  const uses = [...byId.values()].sort((a, b) => a.id - b.id);
  for (const u of uses) u.hosts.sort();
  return { uses, routeIds: routeIds.sort((a, b) => a - b) };
}

/** Every host name served with a custom certificate. */
export function customCertHosts(uses: readonly CustomCertUse[]): Set<string> {
  return new Set(uses.flatMap((u) => u.hosts));
}

/**
 * Puts the certificates into the tls app (made when there is none) and the connection policies into
 * the HTTPS server's; returns the tls app. Nothing changes without uses.
 */
export function withCustomCerts(tls: Json | null, httpsServer: Json | undefined, uses: readonly CustomCertUse[]): Json | null {
  if (!uses.length) return tls;
  const app: Json = tls ?? {};
  app.certificates = {
    ...(app.certificates ?? {}),
    load_pem: uses.map((u) => ({ certificate: u.certificate_pem, key: u.private_key_pem, tags: [customCertTag(u.id)] })),
  };
  const hosts = [...customCertHosts(uses)].sort();
  const automation: Json = (app.automation as Json | undefined) ?? { policies: [] };
  automation.policies = [{ subjects: hosts }, ...((automation.policies as Json[]) ?? [])];
  app.automation = automation;
  if (httpsServer) {
    const policies = (httpsServer.tls_connection_policies as Json[]) ?? [{}];
    httpsServer.tls_connection_policies = [
      ...uses.map((u) => ({ match: { sni: u.hosts }, certificate_selection: { any_tag: [customCertTag(u.id)] } })),
      ...policies,
    ];
  }
  return app;
}
