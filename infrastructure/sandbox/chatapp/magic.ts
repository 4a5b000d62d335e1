import { PLATFORM_CODES } from '../../../domain/chatapp/platform-codes.js';

/**
 * The sandbox chat platform's fixed world (docs/sandbox.md#chat-app-the-sandbox-chat-platform): its business
 * accounts with their numbers, and the recipients whose sends end in a documented way. Numbers are in the UK's
 * range reserved for drama (+44 7700 900xxx), so none is anyone's phone.
 */
export type SandboxBusinessAccount = Readonly<{
  id: string;
  name: string;
  /** without one, every template send fails with 131042 (as the real platform first says on a template send) */
  paymentMethod: boolean;
  numbers: readonly Readonly<{ phoneNumberId: string; phoneNumber: string; verifiedName: string }>[];
}>;

export const SANDBOX_BUSINESS_ACCOUNTS: readonly SandboxBusinessAccount[] = [
  {
    id: '200000000000001',
    name: 'Sandbox Coffee Co.',
    paymentMethod: true,
    numbers: [
      { phoneNumberId: '300000000000011', phoneNumber: '+447700900501', verifiedName: 'Sandbox Coffee' },
      { phoneNumberId: '300000000000012', phoneNumber: '+447700900502', verifiedName: 'Sandbox Coffee Support' },
    ],
  },
  {
    id: '200000000000002',
    name: 'Sandbox Travel Ltd',
    paymentMethod: true,
    numbers: [
      { phoneNumberId: '300000000000021', phoneNumber: '+447700900601', verifiedName: 'Sandbox Travel' },
      { phoneNumberId: '300000000000022', phoneNumber: '+447700900602', verifiedName: 'Sandbox Travel Bookings' },
    ],
  },
  {
    id: '200000000000003',
    name: 'Sandbox Unpaid Inc.',
    paymentMethod: false,
    numbers: [{ phoneNumberId: '300000000000031', phoneNumber: '+447700900701', verifiedName: 'Sandbox Unpaid' }],
  },
];

/** An access token starting with this is refused (code 190), like an expired or revoked one. */
export const INVALID_TOKEN_PREFIX = 'invalid';
/** A template whose name starts with this is rejected at review; every other one is approved. */
export const REJECTED_TEMPLATE_PREFIX = 'reject_';

export type RecipientPlan =
  | Readonly<{ kind: 'refuse'; code: number }>
  | Readonly<{ kind: 'accept'; statuses: readonly ('sent' | 'delivered' | 'read')[]; failure: number | null }>;

const MAGIC: Readonly<Record<string, { plan: RecipientPlan; outcome: string }>> = {
  '+447700900100': { plan: { kind: 'refuse', code: 100 }, outcome: 'refused at once with 100 (the send is invalid): the message fails' },
  '+447700900026': { plan: { kind: 'accept', statuses: ['sent'], failure: 131026 }, outcome: 'sent, then failed with 131026' },
  '+447700900042': { plan: { kind: 'accept', statuses: ['sent'], failure: 131042 }, outcome: 'sent, then failed with 131042' },
  '+447700900047': {
    plan: { kind: 'accept', statuses: ['sent'], failure: 131047 },
    outcome: 'sent, then failed with 131047 (the platform sees no open window, whatever this side recorded)',
  },
  '+447700900051': { plan: { kind: 'accept', statuses: ['sent'], failure: 131051 }, outcome: 'sent, then failed with 131051' },
  '+447700900011': { plan: { kind: 'accept', statuses: ['sent', 'delivered'], failure: null }, outcome: 'sent and delivered, never read' },
};

const DEFAULT_PLAN: RecipientPlan = { kind: 'accept', statuses: ['sent', 'delivered', 'read'], failure: null };

/** What becomes of a send to `to`; a template from a business account without a payment method fails with 131042. */
export function planFor(to: string, o: { template: boolean; paymentMethod: boolean }): RecipientPlan {
  const magic = MAGIC[to]?.plan;
  if (magic) return magic;
  if (o.template && !o.paymentMethod) return { kind: 'accept', statuses: ['sent'], failure: 131042 };
  return DEFAULT_PLAN;
}

/** The magic recipients, as the sandbox control API lists them. */
export function magicRecipients(): { phoneNumber: string; outcome: string; platformCode: number | null; meaning: string | null }[] {
  return Object.entries(MAGIC).map(([phoneNumber, m]) => {
    const code = m.plan.kind === 'refuse' ? m.plan.code : m.plan.failure;
    return {
      phoneNumber,
      outcome: m.outcome,
      platformCode: code,
      meaning: code === null ? null : ((PLATFORM_CODES as Record<number, { meaning: string }>)[code]?.meaning ?? null),
    };
  });
}
