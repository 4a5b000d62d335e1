import { ADMIN_TOKEN, type TestApp } from './http.js';
import { credit, eventually } from './numbers.js';

/** Env of a test app whose sandbox carrier answers at once and whose registrations need no wait. */
export const FAST_MESSAGING_ENV = {
  SANDBOX_SMS_SENT_DELAY_MS: '0',
  SANDBOX_SMS_DELIVERY_DELAY_MS: '0',
  SANDBOX_SMS_POLL_INTERVAL_MS: '20',
  SANDBOX_REGISTRATION_APPROVAL_SECONDS: '0',
  MESSAGE_SEND_BURST: '1000',
  MESSAGE_SEND_RATE_PER_SECOND: '1000',
};

/** A valid sole-proprietor 10DLC registration for the acting account itself. */
export const REGISTRATION = {
  registration_type: 'sole_proprietor',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  phone_number: '+14155550100',
  brand_name: 'Acme',
  street_address: '1 Main St',
  city: 'Springfield',
  state: 'IL',
  zip_code: '62701',
  description: 'We send appointment reminders to customers who booked with us online.',
  use_cases: ['account_notification'],
  message_samples: ['Acme: your appointment is tomorrow at 10am.', 'Acme: reply STOP to opt out of reminders.'],
  consent_flow: 'Customers tick an unchecked consent box on the booking form at acme.example.',
  opt_in_image_url: 'https://acme.example/opt-in.png',
  create_sub_account: false,
};

export type Line = { accountId: string; key: string; agentId: string; numberId: string; phoneNumber: string };

/** An account with an agent, a number attached to it, and (unless `registered: false`) an approved 10DLC registration. */
export async function messagingLine(
  app: TestApp,
  o: { registered?: boolean; country?: 'US' | 'CA'; name?: string; areaCode?: string } = {},
): Promise<Line> {
  const { accountId, apiKey: key } = await app.newAccount(o.name ?? 'Messaging test');
  await credit(app, accountId, 100_000_000);
  const agent = await app.call('POST', '/v1/agents', { key, body: { name: 'Texter' } });
  if (agent.status !== 200) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  const n = await app.call('POST', '/v1/numbers', {
    key,
    body: { country: o.country ?? 'US', agentId: agent.body.id, ...(o.areaCode ? { areaCode: o.areaCode } : {}) },
  });
  if (n.status !== 200) throw new Error(`number: ${n.status} ${JSON.stringify(n.body)}`);
  if (o.registered !== false) {
    const r = await app.call('POST', '/v1/register', { key, body: REGISTRATION });
    if (r.status !== 200) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
    await eventually(
      async () => (await app.call('GET', '/v1/register/status', { key })).body.campaign_status === 'approved',
      'registration approved',
    );
  }
  return { accountId, key, agentId: agent.body.id, numberId: n.body.id, phoneNumber: n.body.phoneNumber };
}

/** An inbound text through the sandbox carrier, as the carrier's callback would bring it. */
export async function inbound(app: TestApp, body: Record<string, unknown>) {
  return app.call('POST', '/sandbox/inbound', { key: ADMIN_TOKEN, body });
}

export async function settings(app: TestApp, accountId: string, body: Record<string, unknown>) {
  const r = await app.call('PATCH', `/admin/accounts/${accountId}/messaging`, { key: ADMIN_TOKEN, body });
  if (r.status !== 200) throw new Error(`settings: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Polls a message (in its conversation) until `done` holds. */
export async function messageWhen(
  app: TestApp,
  key: string,
  conversationId: string,
  messageId: string,
  done: (m: any) => boolean,
  what: string,
) {
  return eventually(async () => {
    const r = await app.call('GET', `/v1/conversations/${conversationId}/messages?limit=200`, { key });
    const m = (r.body?.data ?? []).find((x: { id: string }) => x.id === messageId);
    return m && done(m) ? m : undefined;
  }, what);
}
