// Ordered list of migrations. Append new ones at the end; never edit one that has shipped.
import type { Migration } from '../index.js';
import * as m001 from './001_platform.js';
import * as m002 from './002_peers_routes.js';

export const migrations: Migration[] = [m001, m002];
