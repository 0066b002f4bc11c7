// /api/v1/redirect-hosts and /api/v1/settings/default-site
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import {
  createBody,
  defaultSiteBody,
  defaultSiteResponse,
  redirectHostDeletedResponse,
  redirectHostResponse,
  redirectHostsResponse,
  updateBody,
} from './schema.js';

export function redirectEndpoints(deps: AppContext): Endpoint[] {
  const redirects = () => deps.redirects;
  const tags = ['routes'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/redirect-hosts',
      tags,
      summary: 'Redirect hosts (domains that answer every request with a redirect), by domain',
      response: redirectHostsResponse,
      handler: async () => ({ redirect_hosts: await redirects().list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/redirect-hosts',
      status: 201,
      tags,
      body: createBody,
      response: redirectHostResponse,
      summary:
        "Create a redirect host; live in Caddy when this answers. 409 with field domain when a route, another redirect host or the admin UI has the domain; 422 with fields for a redirect that cannot work (a query in target_url with preserve_path, a target on the host's own domain)",
      handler: async ({ body }, ctx) => ({ redirect_host: await redirects().create(body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/redirect-hosts/:id',
      tags,
      summary: 'One redirect host',
      response: redirectHostResponse,
      handler: async ({ params }) => ({ redirect_host: await redirects().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/redirect-hosts/:id',
      tags,
      body: updateBody,
      response: redirectHostResponse,
      summary: 'Update a redirect host (partial; enabled switches it on and off); the same 409 and 422 as create',
      handler: async ({ params, body }, ctx) => ({ redirect_host: await redirects().update(params.id, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/redirect-hosts/:id',
      tags,
      response: redirectHostDeletedResponse,
      summary: 'Delete a redirect host; its domain then gets the default site',
      handler: async ({ params }, ctx) => ({ deleted: await redirects().remove(params.id, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/default-site',
      tags: ['settings'],
      summary:
        'The default site: what a request for a host name that no route or redirect host serves gets on the HTTP port (and on the HTTPS port for a name that has a certificate)',
      response: defaultSiteResponse,
      handler: async () => ({ default_site: await redirects().defaultSite() }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/default-site',
      tags: ['settings'],
      body: defaultSiteBody,
      response: defaultSiteResponse,
      summary:
        "Set the default site: mode default (Gatehouse's 404 page), redirect (302 to redirect_url) or custom_html (html with status 404); 422 with fields when the mode's value is neither sent nor stored. Live in Caddy when this answers",
      handler: async ({ body }, ctx) => ({ default_site: await redirects().setDefaultSite(body, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
