import { richLineDecider, richLineStream } from '../../domain/rich/rich-line.decider.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { RichEventsPort } from './rich-provider.port.js';
import { RICH_PROVIDER_ACTOR } from './rich-transport.js';

/**
 * What the rich-messaging provider reports about its lines (docs/rich-messaging.md#lines): the native numbers it starts
 * or stops serving become rich lines, or stop being ones. The messages people send to a rich line and the statuses of
 * the messages it was given go to messaging's one inbound handler (docs/messaging.md#receiving).
 */
export class RichEventsHandler implements RichEventsPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly numbers: NumberQueries,
    private readonly log: LoggerPort,
  ) {}

  private ctx(accountId: string, correlationId: string): RequestContext {
    return { accountId, requestId: null, correlationId, actor: RICH_PROVIDER_ACTOR };
  }

  async lineActivated(phoneNumber: string): Promise<{ numberId: string } | null> {
    const n = await this.numbers.activeByPhoneNumber(phoneNumber);
    if (!n) {
      this.log.warn({ phoneNumber }, 'the rich provider serves a number that is not active here: ignored');
      return null;
    }
    await this.exec.execute(
      richLineDecider,
      richLineStream(n.id),
      { type: 'ActivateRichLine', data: { numberId: n.id, phoneNumber } },
      this.ctx(n.accountId, `rich-line:${phoneNumber}`),
      { readYourWrites: true },
    );
    return { numberId: n.id };
  }

  async lineDeactivated(phoneNumber: string): Promise<{ numberId: string } | null> {
    const n = await this.numbers.activeByPhoneNumber(phoneNumber);
    if (!n) return null;
    await this.exec.execute(
      richLineDecider,
      richLineStream(n.id),
      { type: 'DeactivateRichLine', data: { numberId: n.id } },
      this.ctx(n.accountId, `rich-line:${phoneNumber}`),
      { readYourWrites: true },
    );
    return { numberId: n.id };
  }
}
