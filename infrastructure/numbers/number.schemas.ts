import { LINE_TYPES } from '../../application/numbers/carrier.port.js';
import { LOOKUP_BATCH_MAX } from '../../domain/phone-number/pricing.js';
import { DEFAULT_URI_PRIORITY, DEFAULT_URI_WEIGHT, TRANSFER_CALLER_IDS, TRANSFERS } from '../../domain/sip-trunk/sip-trunk.decider.js';
import { sipUriProblem } from '../../domain/sip-trunk/sip-uri.js';
import { AgentNumber, E164 } from '../agents/agent.schemas.js';
import { withAliases } from '../http/compat.js';
import { z } from '../http/openapi.js';
import { AddressBlock } from '../sip/carriers.js';

const id = () => z.string().min(1).max(64);

/** Earlier public SDK versions send `area_code` and `agent_id`: accepted as aliases (docs/compatibility.md). */
export const CreateNumberRequest = withAliases(
  z
    .object({
      country: z
        .preprocess((v) => (typeof v === 'string' ? v.toUpperCase() : v), z.enum(['US', 'CA']))
        .default('US')
        .openapi({ description: 'US or CA (the only countries served); default US' }),
      areaCode: z
        .string()
        .regex(/^\d{3}$/, 'must be a three-digit area code')
        .nullish()
        .transform((v) => v ?? null)
        .openapi({ description: 'a US or Canadian area code; omitted: any area code of the country. Alias: `area_code`' }),
      agentId: id()
        .nullish()
        .transform((v) => v ?? null)
        .openapi({ description: 'attach the new number to this agent. Alias: `agent_id`' }),
    })
    .openapi('CreateNumberRequest'),
  { area_code: 'areaCode', agent_id: 'agentId' },
);

export const PhoneNumberResponse = z
  .object({
    id: z.string(),
    phoneNumber: z.string(),
    country: z.string(),
    status: z.string().openapi({ description: '`active`, or `released` after DELETE (irreversible)' }),
    type: z.string().openapi({ description: 'always `sms` (SMS-enabled; voice too)' }),
    agentId: z.string().nullable(),
    createdAt: z.string(),
    areaCode: z.string().nullable(),
    sipTrunkId: z.string().nullable().openapi({ description: 'the SIP trunk its calls are routed to, if any' }),
    renewalStatus: z.enum(['ok', 'payment_failed']).openapi({
      description:
        "`payment_failed` while this month's $3.00 renewal could not be charged (the number stays active; top up and it is retried)",
    }),
    paidThrough: z.string().nullable().openapi({ description: 'end of the paid month (active numbers)' }),
    releasedAt: z.string().nullable(),
  })
  .openapi('PhoneNumberResponse');

export const PhoneNumberListResponse = z
  .object({ data: z.array(PhoneNumberResponse), hasMore: z.boolean(), total: z.number().int() })
  .openapi('PhoneNumberListResponse');
export const NumberIdParams = z.object({ number_id: id() });
export const AgentNumberParams = z.object({ agent_id: id(), number_id: id() });
export const UpdateNumberRequest = z
  .object({
    sipTrunkId: id()
      .nullable()
      .optional()
      .openapi({ description: "route the number's calls to this SIP trunk; null stops routing them to a trunk" }),
  })
  .openapi('UpdateNumberRequest');
export const DeleteNumberResponse = z
  .object({ success: z.boolean(), phoneNumber: z.string(), status: z.string() })
  .openapi('DeleteNumberResponse');
/** An earlier public SDK version sends `number_id` (docs/compatibility.md). */
export const AttachNumberRequest = withAliases(
  z.object({ numberId: id().openapi({ description: 'Alias: `number_id`' }) }).openapi('AttachNumberRequest'),
  { number_id: 'numberId' },
);
export const AttachNumberResponse = z.object({ agentId: z.string(), number: AgentNumber }).openapi('AttachNumberResponse');

export const LookupQuery = z.object({
  phoneNumbers: z
    .preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v), z.array(E164).min(1).max(LOOKUP_BATCH_MAX))
    .openapi({
      type: 'string',
      description: `comma-separated E.164 numbers, at most ${LOOKUP_BATCH_MAX}`,
      example: '+14155550100,+14165550123',
    }),
});
export const NumberLookupResult = z
  .object({
    phoneNumber: z.string(),
    valid: z.boolean().openapi({ description: 'false when the number cannot exist (unassigned area code, unknown country code)' }),
    lineType: z.enum(LINE_TYPES),
    country: z.string().nullable().openapi({ description: 'ISO 3166-1 alpha-2' }),
    carrierName: z.string().nullable(),
    rcsSupported: z.boolean().openapi({ description: 'whether the handset supports RCS' }),
    cached: z.boolean().openapi({ description: "answered from this account's earlier, still fresh lookup: not charged" }),
    lookedUpAt: z.string(),
  })
  .openapi('NumberLookupResult');
export const NumberLookupResponse = z
  .object({
    data: z.array(NumberLookupResult),
    chargedNumbers: z.number().int().openapi({ description: 'numbers looked up at the carrier and charged ($0.009 each)' }),
    chargedMicros: z.number().int(),
  })
  .openapi('NumberLookupResponse');

// --- SIP trunks: snake_case, as the API names the fields (docs/numbers.md#sip-trunks) -------------------------------------------------

const SipUri = z.string().superRefine((v, ctx) => {
  const problem = sipUriProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const port16 = (def: number) =>
  z
    .number()
    .int()
    .min(0)
    .max(65535)
    .nullish()
    .transform((v) => v ?? def);
const OriginationUriIn = z.object({
  sip_uri: SipUri.openapi({
    description: 'destination SIP URI, optionally with ;transport=udp|tcp|tls',
    example: 'sip:pbx.example.com:5061;transport=tls',
  }),
  name: z
    .string()
    .max(64)
    .nullish()
    .transform((v) => v ?? null),
  priority: port16(DEFAULT_URI_PRIORITY).openapi({ description: '0-65535, default 10' }),
  weight: port16(DEFAULT_URI_WEIGHT).openapi({ description: '0-65535, default 10' }),
});
const Uris = z.array(OriginationUriIn).max(16);
const toUris = (uris: z.output<typeof Uris>) =>
  uris.map((u) => ({ sipUri: u.sip_uri, name: u.name, priority: u.priority, weight: u.weight }));

/**
 * The termination side (docs/sip.md#calls-from-your-pbx): digest credentials and source addresses your PBX sends
 * calls out with. A password is taken, sealed, and never shown again.
 */
const TerminationCredentialIn = z.object({
  username: z
    .string()
    .regex(/^[A-Za-z0-9._~-]{1,32}$/, '1-32 letters, digits and . _ ~ -')
    .openapi({ example: 'office-pbx' }),
  password: z
    .string()
    .min(12)
    .max(128)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional()
    .openapi({
      description: '12-128 printable characters; write-only. On update, left out: the stored password of this user name stays',
    }),
});
const TerminationIn = z
  .object({
    credentials: z.array(TerminationCredentialIn).max(10).optional().openapi({ description: 'sent: replaces the credentials' }),
    addresses: z
      .array(AddressBlock)
      .max(32)
      .optional()
      .openapi({
        description: 'sent: replaces the addresses (IPv4 or IPv6 addresses or CIDR blocks)',
        example: ['203.0.113.7', '198.51.100.0/24'],
      }),
  })
  .strict();
/** a termination as the commands take it: passwords still plain (they seal them) */
const toTermination = (t: z.output<typeof TerminationIn>) => ({
  ...(t.credentials
    ? { credentials: t.credentials.map((c) => ({ username: c.username, ...(c.password ? { password: c.password } : {}) })) }
    : {}),
  ...(t.addresses ? { addresses: t.addresses } : {}),
});

export const CreateSipTrunkRequest = z
  .object({
    name: z.string().trim().min(1).max(64).optional(),
    transfers: z.enum(TRANSFERS).optional(),
    transfer_caller_id: z.enum(TRANSFER_CALLER_IDS).optional(),
    origination: z.object({ uris: Uris.optional() }).optional(),
    termination: TerminationIn.optional(),
  })
  .optional()
  .transform((b) => ({
    name: b?.name ?? 'SIP trunk',
    transfers: b?.transfers ?? 'all',
    transferCallerId: b?.transfer_caller_id ?? 'transferee',
    uris: toUris(b?.origination?.uris ?? []),
    ...(b?.termination ? { termination: toTermination(b.termination) } : {}),
  }))
  .openapi('SipTrunkCreateRequest');

export const UpdateSipTrunkRequest = z
  .object({
    name: z.string().trim().min(1).max(64).nullish(),
    transfers: z.enum(TRANSFERS).nullish(),
    transfer_caller_id: z.enum(TRANSFER_CALLER_IDS).nullish(),
    origination: z.object({ uris: Uris.nullish() }).nullish().openapi({
      description:
        'sent: its `uris` replace the origination URIs; empty or omitted `uris` clear them (only while no number is routed to the trunk)',
    }),
    termination: TerminationIn.nullish().openapi({
      description: 'each list sent replaces the stored one; a credential without `password` keeps the stored one of its user name',
    }),
  })
  .transform((b) => ({
    ...(b.name ? { name: b.name } : {}),
    ...(b.transfers ? { transfers: b.transfers } : {}),
    ...(b.transfer_caller_id ? { transferCallerId: b.transfer_caller_id } : {}),
    ...(b.origination ? { uris: toUris(b.origination.uris ?? []) } : {}),
    ...(b.termination ? { termination: toTermination(b.termination) } : {}),
  }))
  .openapi('SipTrunkUpdateRequest');

export const SipTrunkResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    transfers: z.enum(TRANSFERS),
    transfer_caller_id: z.enum(TRANSFER_CALLER_IDS),
    origination: z.object({
      uris: z.array(z.object({ sip_uri: z.string(), name: z.string().nullable(), priority: z.number().int(), weight: z.number().int() })),
    }),
    termination: z.object({
      sip_uri: z.string().openapi({ description: 'where your SIP infrastructure sends calls into the platform' }),
      credentials: z
        .array(z.object({ username: z.string() }))
        .openapi({ description: 'the digest credentials your PBX may send calls out with (passwords are never shown)' }),
      addresses: z.array(z.string()).openapi({ description: 'the source addresses your PBX may send calls out from' }),
    }),
    number_ids: z.array(z.string()).openapi({ description: 'phone numbers whose calls are routed to this trunk' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('SipTrunkResponse');
export const SipTrunkListResponse = z
  .object({ data: z.array(SipTrunkResponse), hasMore: z.boolean(), total: z.number().int() })
  .openapi('SipTrunkListResponse');
export const SipTrunkDeleteResponse = z.object({ success: z.boolean(), id: z.string() }).openapi('SipTrunkDeleteResponse');
export const TrunkIdParams = z.object({ trunk_id: id() });
