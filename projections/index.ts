import { accountsProjector } from './accounts.projector.js';
import { agentsProjector } from './agents.projector.js';
import { signupsProjector } from './signups.projector.js';
import { phoneNumbersProjector } from './phone-numbers.projector.js';
import { sipTrunksProjector } from './sip-trunks.projector.js';
import type { Projector } from './shared/projector.js';
import { webhookDeliveriesProjector } from './webhook-deliveries.projector.js';
import { webhooksProjector } from './webhooks.projector.js';
import { usageProjector } from './usage.projector.js';

/** Every projector the service runs; the names are their checkpoint keys (bump `_vN` to rebuild into new tables). */
export const allProjectors: readonly Projector[] = [accountsProjector, agentsProjector, signupsProjector, phoneNumbersProjector, sipTrunksProjector, webhooksProjector, webhookDeliveriesProjector, usageProjector];
