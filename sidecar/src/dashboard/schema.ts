// Query schemas of the dashboard API (zod).
import { z } from 'zod';

export const trafficQuery = z.object({ period: z.enum(['1h', '24h', '7d']).default('24h') });
