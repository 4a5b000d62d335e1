import type { AnalyticsQueries } from '../../application/analytics/analytics.port.js';
import type { UsageAnalytics } from '../../application/analytics/usage-analytics.js';
import { token } from '../capabilities/token.js';

/** The analytics capability's tokens. */
export const ANALYTICS = {
  Queries: token<AnalyticsQueries>('AnalyticsQueries'),
  Usage: token<UsageAnalytics>('UsageAnalytics'),
} as const;
