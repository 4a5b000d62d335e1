import { BlockList, isIPv6 } from 'node:net';
import { type CarrierChangesInput, type CarrierView, type NewCarrier, outboundView } from '../../application/carriers/carriers.js';
import type { CarrierQueries, CarrierRecord } from '../../application/carriers/carriers.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { z } from '../http/openapi.js';
import { DEFAULT_NUMBER_FORMAT, type NumberFormat } from './number-format.js';

/**
 * A carrier whose SIP trunk reaches the platform (docs/sip.md#carriers): who may send calls in (source addresses,
 * digest credentials), where calls go out (the outbound gateway, with its credentials and an optional
 * registration), and how it writes numbers.
 */
export type Carrier = Readonly<{
  id: string;
  name: string;
  inbound: Readonly<{
    /** source addresses or CIDR blocks whose INVITEs are this carrier's */
    addresses: readonly string[];
    /** digest credentials a carrier without fixed addresses authenticates with */
    username: string | null;
    password: string | null;
  }>;
  outbound: Readonly<{
    host: string;
    port: number;
    transport: 'udp' | 'tcp';
    username: string | null;
    password: string | null;
    /** REGISTER with the gateway (and refresh before it expires) */
    register: boolean;
    registerExpiresSeconds: number;
  }> | null;
  numberFormat: NumberFormat;
}>;

/** Where the engine reads the carriers from: the operator API's records and the start-up file (docs/sip.md#carriers). */
export interface CarrierDirectory {
  list(): Promise<readonly Carrier[]>;
}

/** An IPv4 or IPv6 address, or a CIDR block: a source a carrier's or a trunk's calls may come from. */
export const AddressBlock = z
  .string()
  .refine((s) => parseBlock(s) !== null, 'an IPv4 or IPv6 address, or a CIDR block such as 203.0.113.0/24');
const cidr = AddressBlock;
const username = z.string().min(1).max(128);
const password = z.string().min(1).max(256);

const InboundInput = z.object({
  addresses: z.array(cidr).max(64).default([]),
  username: username.nullish(),
  password: password.nullish(),
});
const OutboundInput = z.object({
  host: z.string().min(1).max(253),
  port: z.number().int().min(1).max(65535).default(5060),
  transport: z.enum(['udp', 'tcp']).default('udp'),
  username: username.nullish(),
  password: password.nullish(),
  register: z.boolean().default(false),
  registerExpiresSeconds: z.number().int().min(60).max(86_400).default(3600),
});
const NumberFormatInput = z.object({
  plus: z.boolean().default(DEFAULT_NUMBER_FORMAT.plus),
  prefix: z
    .string()
    .regex(/^[0-9*#]{0,8}$/)
    .default(''),
  defaultCountryCode: z
    .string()
    .regex(/^[1-9]\d{0,2}$/)
    .default(DEFAULT_NUMBER_FORMAT.defaultCountryCode),
});

/** A carrier as the operator writes it: the start-up file, `SIP_CARRIERS`, and `POST /admin/carriers` (docs/sip.md#carriers). */
export const CarrierInput = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _ (at most 63)'),
    name: z.string().min(1).max(64).optional(),
    inbound: InboundInput.default({ addresses: [] }),
    outbound: OutboundInput.nullish(),
    numberFormat: NumberFormatInput.default(DEFAULT_NUMBER_FORMAT),
  })
  .openapi('AdminCarrierRequest');
export type CarrierInput = z.infer<typeof CarrierInput>;

/**
 * A change of a carrier (`PATCH /admin/carriers/{id}`): each section given replaces the stored one whole, except
 * that a password left out keeps the stored one (while the user name stays the same) and `null` removes it.
 */
export const CarrierPatch = z
  .object({
    name: z.string().min(1).max(64).optional(),
    inbound: InboundInput.optional(),
    outbound: OutboundInput.nullable().optional(),
    numberFormat: NumberFormatInput.optional(),
  })
  .openapi('AdminCarrierPatch');
export type CarrierPatch = z.infer<typeof CarrierPatch>;

/** The file's or the variable's carrier, as the engine holds it. */
export function carrierOf(i: CarrierInput): Carrier {
  return {
    id: i.id,
    name: i.name ?? i.id,
    inbound: { addresses: i.inbound.addresses, username: i.inbound.username ?? null, password: i.inbound.password ?? null },
    outbound: i.outbound
      ? {
          host: i.outbound.host,
          port: i.outbound.port,
          transport: i.outbound.transport,
          username: i.outbound.username ?? null,
          password: i.outbound.password ?? null,
          register: i.outbound.register,
          registerExpiresSeconds: i.outbound.registerExpiresSeconds,
        }
      : null,
    numberFormat: i.numberFormat,
  };
}

/** The carrier a create request describes, for the operator API's service (passwords still plain: it seals them). */
export function newCarrierOf(i: CarrierInput): NewCarrier {
  const c = carrierOf(i);
  return { carrierId: c.id, name: c.name, inbound: c.inbound, outbound: c.outbound, numberFormat: c.numberFormat };
}

/** A change request as the service takes it: `undefined` stays "not given" all the way to the decider. */
export function carrierChangesOf(p: CarrierPatch): CarrierChangesInput {
  const inbound = p.inbound;
  const outbound = p.outbound;
  return {
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...(inbound
      ? {
          inbound: {
            addresses: inbound.addresses,
            username: inbound.username ?? null,
            ...(inbound.password !== undefined ? { password: inbound.password } : {}),
          },
        }
      : {}),
    ...(outbound === null ? { outbound: null } : {}),
    ...(outbound
      ? {
          outbound: {
            host: outbound.host,
            port: outbound.port,
            transport: outbound.transport,
            username: outbound.username ?? null,
            register: outbound.register,
            registerExpiresSeconds: outbound.registerExpiresSeconds,
            ...(outbound.password !== undefined ? { password: outbound.password } : {}),
          },
        }
      : {}),
    ...(p.numberFormat ? { numberFormat: p.numberFormat } : {}),
  };
}

/** A carrier recorded through the API, as the engine holds it: its passwords opened. */
export function carrierOfRecord(r: CarrierRecord, open: (sealed: string) => string): Carrier {
  const s = r.settings;
  return {
    id: r.carrierId,
    name: s.name,
    inbound: {
      addresses: s.inbound.addresses,
      username: s.inbound.username,
      password: s.inbound.passwordSealed === null ? null : open(s.inbound.passwordSealed),
    },
    outbound: s.outbound
      ? {
          host: s.outbound.host,
          port: s.outbound.port,
          transport: s.outbound.transport,
          username: s.outbound.username,
          password: s.outbound.passwordSealed === null ? null : open(s.outbound.passwordSealed),
          register: s.outbound.register,
          registerExpiresSeconds: s.outbound.registerExpiresSeconds,
        }
      : null,
    numberFormat: s.numberFormat,
  };
}

/** A carrier of the start-up configuration, as the operator API lists it (read-only, never a password). */
export function configuredView(c: Carrier): CarrierView {
  const { password: inboundPassword, ...inbound } = c.inbound;
  const out = c.outbound;
  return {
    id: c.id,
    name: c.name,
    source: 'configuration',
    inbound: { ...inbound, addresses: [...inbound.addresses], hasPassword: inboundPassword !== null },
    outbound: out ? outboundView(out, out.password !== null) : null,
    numberFormat: c.numberFormat,
    createdAt: null,
    updatedAt: null,
  };
}

/** The carriers of `SIP_CARRIERS` (JSON) or the file `SIP_CARRIERS_FILE` names: a list, checked as the API checks it. */
export function parseCarrierList(json: string, source: string): Carrier[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new Error(`${source}: not JSON (${(err as Error).message})`);
  }
  const r = z.array(CarrierInput).max(100).safeParse(raw);
  if (!r.success) throw new Error(`${source}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data.map(carrierOf);
}

/** Carriers from several sources: an id given twice is an error of the configuration. */
export function distinctCarriers(lists: readonly { source: string; carriers: readonly Carrier[] }[]): Carrier[] {
  const seen = new Map<string, string>();
  const out: Carrier[] = [];
  for (const { source, carriers } of lists)
    for (const c of carriers) {
      const before = seen.get(c.id);
      if (before) throw new Error(`${source}: carrier id ${c.id} is given twice${before === source ? '' : ` (also in ${before})`}`);
      seen.set(c.id, source);
      out.push(c);
    }
  return out;
}

/**
 * The carriers the engine works with (docs/sip.md#carriers): those of the start-up configuration, then those recorded
 * through the operator API whose ids the configuration does not use (the configuration wins). A recorded carrier
 * whose password cannot be opened (SECRETS_KEY changed) is left out, with a log line.
 */
export class CarrierBook implements CarrierDirectory {
  constructor(
    private readonly configured: readonly Carrier[],
    private readonly stored: CarrierQueries,
    private readonly open: (sealed: string) => string,
    private readonly log: LoggerPort,
  ) {}

  async list(): Promise<readonly Carrier[]> {
    const taken = new Set(this.configured.map((c) => c.id));
    const out = [...this.configured];
    for (const r of await this.stored.list()) {
      if (taken.has(r.carrierId)) continue;
      try {
        out.push(carrierOfRecord(r, this.open));
      } catch (err) {
        this.log.error({ carrier: r.carrierId, err: (err as Error).message }, 'a carrier is left out: its password cannot be opened');
      }
    }
    return out;
  }
}

function parseBlock(s: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, bits] = s.split('/');
  if (!address) return null;
  const family = isIPv6(address) ? 'ipv6' : /^\d{1,3}(\.\d{1,3}){3}$/.test(address) ? 'ipv4' : null;
  if (!family) return null;
  const max = family === 'ipv6' ? 128 : 32;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  if (family === 'ipv4' && address.split('.').some((o) => Number(o) > 255)) return null;
  return { address, prefix, family };
}

/** Whether `address` is one of `blocks` (addresses or CIDR blocks; ones that are neither match nothing). */
export function inBlocks(blocks: readonly string[], address: string): boolean {
  const list = new BlockList();
  for (const a of blocks) {
    const b = parseBlock(a);
    if (b) list.addSubnet(b.address, b.prefix, b.family);
  }
  return list.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}

/** Which carrier an INVITE from `address` belongs to by its source (docs/sip.md#inbound-calls). */
export function carrierByAddress(carriers: readonly Carrier[], address: string): Carrier | null {
  return carriers.find((c) => inBlocks(c.inbound.addresses, address)) ?? null;
}
