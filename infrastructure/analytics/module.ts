import { UsageAnalytics } from '../../application/analytics/usage-analytics.js';
import { analyticsProjectors } from '../../projections/analytics/analytics.projectors.js';
import { KyselyAnalyticsQueries } from '../../projections/analytics/analytics.queries.js';
import type { Capability } from '../capabilities/capability.js';
import * as m120 from '../db/migrations/120-analytics.js';
import { PLATFORM } from '../platform/tokens.js';
import { analyticsRoutes } from './analytics.routes.js';
import { ANALYTICS } from './tokens.js';

/**
 * Analytics (docs/analytics.md): four ordinary, rebuildable projectors (messages, calls and turns, webhook
 * deliveries and attempts, charges), the usage breakdowns of the public API (`/v1/usage/daily`, `/monthly`,
 * `/by-number`, `/by-agent`) and the delivery analytics (`/v1/analytics/*`), all by one counting rule
 * (domain/analytics/counting.ts), which GET /v1/usage and the delivery statistics share.
 */
export const analytics = {
  name: 'analytics',
  bind: (b) => {
    b.factory(ANALYTICS.Queries, (r) => new KyselyAnalyticsQueries(r(PLATFORM.ReadDb)));
    b.factory(ANALYTICS.Usage, (r) => new UsageAnalytics(r(PLATFORM.Clock), r(ANALYTICS.Queries)));
  },
  routes: { v1: (api, r) => analyticsRoutes(api, { usage: r(ANALYTICS.Usage) }) },
  projectors: analyticsProjectors,
  migrations: { '120-analytics': m120 },
} as const satisfies Capability;
