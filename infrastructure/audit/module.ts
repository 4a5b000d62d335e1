import { HistoryService } from '../../application/audit/history.js';
import type { Capability } from '../capabilities/capability.js';
import { PLATFORM } from '../platform/tokens.js';
import { auditCli } from './audit.cli.js';
import { auditRoutes } from './audit.routes.js';
import { AUDIT } from './tokens.js';

/**
 * Audit replay (docs/audit.md): the history of each resource the capabilities contribute (`histories`: a message, a
 * conversation, a call, a webhook delivery), read from its event stream (the one query path that reads the event
 * store), the record as of an instant (`?at=`), the CLI's `history`, and `replay <projector> --until` into a scratch
 * schema. Delivery replay (sending again) belongs to the webhooks capability.
 */
export const audit = {
  name: 'audit',
  bind: (b) => {
    b.factory(
      AUDIT.History,
      (r) =>
        new HistoryService(
          r(PLATFORM.EventStore),
          r(PLATFORM.Histories).map((h) => h.view),
        ),
    );
  },
  routes: { v1: (api, r) => auditRoutes(api, { history: r(AUDIT.History), routes: r(PLATFORM.Histories) }) },
  cli: auditCli,
} as const satisfies Capability;
