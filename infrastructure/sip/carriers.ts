import { BlockList, isIPv6 } from 'node:net';
import { z } from 'zod';
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

const cidr = z.string().refine((s) => parseBlock(s) !== null, 'an IPv4 or IPv6 address, or a CIDR block such as 203.0.113.0/24');

/** A carrier as the operator writes it (the start-up file, `SIP_CARRIERS`, and the operator API). */
export const CarrierInput = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _ (at most 63)'),
  name: z.string().min(1).max(64).optional(),
  inbound: z
    .object({
      addresses: z.array(cidr).max(64).default([]),
      username: z.string().min(1).max(128).nullish(),
      password: z.string().min(1).max(256).nullish(),
    })
    .default({ addresses: [] }),
  outbound: z
    .object({
      host: z.string().min(1).max(253),
      port: z.number().int().min(1).max(65535).default(5060),
      transport: z.enum(['udp', 'tcp']).default('udp'),
      username: z.string().min(1).max(128).nullish(),
      password: z.string().min(1).max(256).nullish(),
      register: z.boolean().default(false),
      registerExpiresSeconds: z.number().int().min(60).max(86_400).default(3600),
    })
    .nullish(),
  numberFormat: z
    .object({
      plus: z.boolean().default(DEFAULT_NUMBER_FORMAT.plus),
      prefix: z
        .string()
        .regex(/^[0-9*#]{0,8}$/)
        .default(''),
      defaultCountryCode: z
        .string()
        .regex(/^[1-9]\d{0,2}$/)
        .default(DEFAULT_NUMBER_FORMAT.defaultCountryCode),
    })
    .default(DEFAULT_NUMBER_FORMAT),
});
export type CarrierInput = z.infer<typeof CarrierInput>;

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
  const ids = new Set<string>();
  for (const c of r.data) {
    if (ids.has(c.id)) throw new Error(`${source}: carrier id ${c.id} is given twice`);
    ids.add(c.id);
  }
  return r.data.map(carrierOf);
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

/** Which carrier an INVITE from `address` belongs to by its source (docs/sip.md#inbound-calls). */
export function carrierByAddress(carriers: readonly Carrier[], address: string): Carrier | null {
  const family = isIPv6(address) ? 'ipv6' : 'ipv4';
  for (const c of carriers) {
    const list = new BlockList();
    for (const a of c.inbound.addresses) {
      const b = parseBlock(a);
      if (b) list.addSubnet(b.address, b.prefix, b.family);
    }
    if (list.check(address, family)) return c;
  }
  return null;
}
