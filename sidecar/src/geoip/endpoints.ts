// GET /api/v1/system/geoip: the country database (GATEHOUSE_GEOIP_DB) the routes' country filters use.
import { Op } from 'sequelize';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { geoipStatusResponse } from './schema.js';

export function geoipEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/system/geoip',
      tags: ['system'],
      response: geoipStatusResponse,
      summary:
        "The country database of the routes' country filters (GATEHOUSE_GEOIP_DB): configured, present, database_type, source (maxmind, dbip, other), built_at, description, the file's size and date, why it is not usable (error), and how many routes have a country filter",
      handler: async (_i, ctx) => {
        ctx.set('Cache-Control', 'no-store');
        const routes = await deps.db.models.Route.count({ where: { geo_filter: { [Op.ne]: null } } });
        return { geoip: { ...deps.geoip.status(), routes_with_filter: routes } };
      },
    }),
  ];
}
