import type { HistoryService } from '../../application/audit/history.js';
import { token } from '../capabilities/token.js';

/** The audit capability's tokens. */
export const AUDIT = {
  History: token<HistoryService>('HistoryService'),
} as const;
