import { type WebhookEvent, webhookDecider } from '../../domain/webhook/webhook.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { MailerPort } from '../signup/mailer.port.js';
import type { AccountAddressesPort } from './webhook.port.js';

type Warned = Extract<WebhookEvent, { type: 'WebhookDisableWarned' }>;

/** The e-mail of a disable warning, in words a developer acts on. */
export function warningMail(d: Warned['data']): { subject: string; text: string } {
  const which = d.agentId ? `the webhook of agent ${d.agentId}` : "your account's webhook";
  return {
    subject: `Your webhook ${d.url} will be disabled after one more failed delivery`,
    text: [
      `${d.consecutiveFailures} deliveries in a row to ${which} (${d.url}) failed every attempt.`,
      `If the next delivery fails too, the webhook is disabled and no more events are sent to it.`,
      '',
      'What to do: make sure the endpoint answers 2xx quickly (GET /v1/webhooks/deliveries shows each attempt with its',
      'status and error), then send the failed deliveries again with POST /v1/webhooks/deliveries/recover {"since": "…"}.',
      'Once disabled, configuring the webhook again (POST /v1/webhooks) makes it active.',
    ].join('\n'),
  };
}

/**
 * Mails the account when one of its webhooks is about to be disabled (docs/webhooks.md#status). The step is keyed
 * by the warning's event id: a warning whose outcome the webhook's stream already records is not mailed again;
 * a crash between the send and the record sends the mail once more (at least once). The outcome is recorded on
 * the webhook's stream (`WebhookWarningMailed`, with `to: null` when the account has no address).
 */
export class WebhookWarningMailer extends ProcessManager<Warned> {
  readonly name = 'webhook_warning_mailer';
  readonly handles = ['WebhookDisableWarned'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly addresses: AccountAddressesPort,
    private readonly mailer: MailerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Warned>): string {
    return e.streamName;
  }

  protected async react(e: RecordedEvent<Warned>, ctx: RequestContext): Promise<void> {
    const { events } = await this.exec.load(webhookDecider, e.streamName);
    if (events.some((x) => x.type === 'WebhookWarningMailed' && x.data.warningId === e.id)) return;
    const to = await this.addresses.addressOf(e.data.accountId);
    if (to) await this.mailer.send({ to, ...warningMail(e.data) });
    await this.exec.execute(webhookDecider, e.streamName, { type: 'RecordWarningMail', data: { warningId: e.id, to } }, ctx);
  }
}
