import { ADMIN_TOKEN, type TestApp } from './http.js';
import { eventually } from './numbers.js';

/** Env of a test app whose sandbox chat platform answers at once: reviews and statuses due immediately, polled often. */
export const FAST_CHATAPP_ENV = {
  SANDBOX_CHATAPP_TEMPLATE_REVIEW_SECONDS: '0',
  SANDBOX_CHATAPP_STATUS_DELAY_MS: '0',
  SANDBOX_CHATAPP_POLL_INTERVAL_MS: '20',
};

/** The sandbox platform's fixed business accounts and numbers (docs/sandbox.md#chat-app-the-sandbox-chat-platform). */
export const COFFEE = {
  businessAccountId: '200000000000001',
  numbers: ['300000000000011', '300000000000012'],
  phones: ['+447700900501', '+447700900502'],
} as const;
export const TRAVEL = {
  businessAccountId: '200000000000002',
  numbers: ['300000000000021', '300000000000022'],
  phones: ['+447700900601', '+447700900602'],
} as const;
export const UNPAID = { businessAccountId: '200000000000003', numbers: ['300000000000031'], phones: ['+447700900701'] } as const;

export async function connect(app: TestApp, key: string, businessAccountId: string, accessToken = 'sandbox-token-1') {
  const r = await app.call('POST', '/integrations/chatapp/connections', {
    key,
    body: { business_account_id: businessAccountId, access_token: accessToken },
  });
  if (r.status !== 200) throw new Error(`connect: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; status: string; businessAccountId: string };
}

export async function bind(app: TestApp, key: string, connectionId: string, phoneNumberId: string, agentId?: string) {
  const r = await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, {
    key,
    body: { phone_number_id: phoneNumberId, ...(agentId ? { agent_id: agentId } : {}) },
  });
  if (r.status !== 200) throw new Error(`bind: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; numberId: string; phoneNumber: string; dualChannel: boolean; status: string };
}

/** A template, created and waited for until the sandbox platform has reviewed it. */
export async function approvedTemplate(app: TestApp, key: string, connectionId: string, body: Record<string, unknown>) {
  const r = await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
    key,
    body: { language: 'en_US', category: 'utility', ...body },
  });
  if (r.status !== 200) throw new Error(`template: ${r.status} ${JSON.stringify(r.body)}`);
  // the sandbox platform reviews a template SANDBOX_CHATAPP_TEMPLATE_REVIEW_SECONDS (5) after it came: look 4 times a second
  return eventually(
    async () => {
      const t = await app.call('GET', `/integrations/chatapp/${connectionId}/templates/${r.body.id}`, { key });
      return t.body.status !== 'pending' ? t.body : undefined;
    },
    'template reviewed',
    20_000,
    250,
  );
}

/** A chat message from a person to a platform number, as the sandbox platform reports it. */
export const chatInbound = (app: TestApp, body: Record<string, unknown>) =>
  app.call('POST', '/sandbox/chatapp/inbound', { key: ADMIN_TOKEN, body });

export const advanceClock = async (app: TestApp, seconds: number) => {
  const r = await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: seconds } });
  if (r.status !== 200) throw new Error(`clock: ${r.status} ${JSON.stringify(r.body)}`);
};
