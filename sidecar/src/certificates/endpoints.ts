// Custom certificates: GET/POST /api/v1/certificates, GET/PUT/DELETE /api/v1/certificates/:id. The
// private key goes in, never out.
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import type { CertificatesService } from './service.js';
import { certificateDeletedResponse, certificateResponse, certificatesResponse, createCertificateBody, replaceCertificateBody } from './schema.js';

export function certificateEndpoints(certs: () => CertificatesService): Endpoint[] {
  const tags = ['routes'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/certificates',
      tags,
      response: certificatesResponse,
      summary: 'The custom certificates by name: their names (SANs), issuer, validity, days left, fingerprint and the routes using them. Never a private key',
      handler: async () => ({ certificates: await certs().list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/certificates',
      tags,
      status: 201,
      body: createCertificateBody,
      storedChecks: (raw) => certs().storedProblems(raw),
      response: certificateResponse,
      errors: { '409': 'a certificate with this name exists (fields.name)' },
      summary:
        "Upload a certificate (leaf first, then its chain) and its private key, both PEM. 422 with fields when a certificate cannot be read, names no domain, has expired or is not valid yet, the chain is out of order, or the key is not the leaf's (fields.private_key_pem). The key is stored sealed with the master key and never returned. A route uses it once it names it (certificate_id)",
      handler: async ({ body }, ctx) => ({ certificate: await certs().create(body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/certificates/:id',
      tags,
      response: certificateResponse,
      summary: 'One custom certificate (never its private key)',
      handler: async ({ params }) => ({ certificate: await certs().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/certificates/:id',
      tags,
      body: replaceCertificateBody,
      storedChecks: (raw, ctx) => certs().storedProblems(raw, Number(ctx.state.params.id)),
      response: certificateResponse,
      errors: { '409': 'another certificate has this name (fields.name)' },
      summary:
        'Replace the certificate and its key (the renewal), optionally with a new name: checked as on upload, and it must still cover the domain of every route using it (422 fields.certificate_pem otherwise). The routes serve the new certificate at once',
      handler: async ({ params, body }, ctx) => ({ certificate: await certs().replace(params.id, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/certificates/:id',
      tags,
      response: certificateDeletedResponse,
      errors: { '409': 'routes use it: the answer names them (routes: [{id, domain}])' },
      summary: 'Delete a custom certificate that no route uses (409 naming the routes that do)',
      handler: async ({ params }, ctx) => ({ deleted: await certs().remove(params.id, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
