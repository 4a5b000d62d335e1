import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * A carrier whose SIP trunk reaches the platform, as the operator configures it through the API (docs/sip.md#carriers),
 * `carrier-<id>`: who may send calls in (source addresses or CIDR blocks, digest credentials), where calls go out
 * (the outbound gateway, its credentials, an optional registration), and how it writes numbers. The id is the
 * operator's (`telnyx`), the one numbers are imported with.
 *
 * Passwords are only ever held sealed (`passwordSealed`, opened by the SIP engine); no event or read model holds
 * one plain, and no answer shows one.
 *
 *   Created -> Changed* -> Deleted; Created again after Deleted.
 */
export const carrierStream = (carrierId: string) => `carrier-${carrierId}`;

export type Transport = 'udp' | 'tcp';

export type CarrierInbound = Readonly<{
  /** source addresses or CIDR blocks whose INVITEs are this carrier's */
  addresses: readonly string[];
  /** digest credentials a carrier without fixed addresses authenticates its INVITEs with */
  username: string | null;
  passwordSealed: string | null;
}>;

export type CarrierOutbound = Readonly<{
  host: string;
  port: number;
  transport: Transport;
  username: string | null;
  passwordSealed: string | null;
  /** REGISTER with the gateway, refreshed before it expires */
  register: boolean;
  registerExpiresSeconds: number;
}>;

export type CarrierNumberFormat = Readonly<{ plus: boolean; prefix: string; defaultCountryCode: string }>;

export type CarrierSettings = Readonly<{
  name: string;
  inbound: CarrierInbound;
  outbound: CarrierOutbound | null;
  numberFormat: CarrierNumberFormat;
}>;

/**
 * A section as a change gives it: a password left out (`undefined`) keeps the stored one, as long as the user name
 * stays the same; `null` removes it.
 */
type Given<T extends { passwordSealed: string | null }> = Omit<T, 'passwordSealed'> & { passwordSealed?: string | null };

/** A change replaces the sections it names, whole (a password aside). */
export type CarrierChanges = Readonly<{
  name?: string;
  inbound?: Given<CarrierInbound>;
  outbound?: Given<CarrierOutbound> | null;
  numberFormat?: CarrierNumberFormat;
}>;

type Ref = { carrierId: string };

export type CarrierCommand =
  | Command<'CreateCarrier', Ref & { settings: CarrierSettings }>
  | Command<'ChangeCarrier', Ref & { changes: CarrierChanges }>
  | Command<'DeleteCarrier', Ref>;

export type CarrierEvent =
  | Event<'CarrierCreated', Ref & { settings: CarrierSettings; createdAt: string }>
  | Event<'CarrierChanged', Ref & { settings: CarrierSettings; changedAt: string }>
  | Event<'CarrierDeleted', Ref & { deletedAt: string }>;

export const carrierEventTypes = ['CarrierCreated', 'CarrierChanged', 'CarrierDeleted'] as const satisfies readonly CarrierEvent['type'][];

export type CarrierState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; carrierId: string; settings: CarrierSettings; createdAt: string };

const notFound = (id: string) => new DomainError('CARRIER_NOT_FOUND', `No carrier ${id}`);
const invalid = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, [{ field, message, type: 'value_error' }]);

/**
 * The rules a carrier's settings keep whatever the change (docs/sip.md#carriers): digest credentials come as a
 * pair, and a carrier lets calls in (addresses or credentials) or out (a gateway), or both.
 */
function checked(s: CarrierSettings): CarrierSettings {
  const pair = (field: string, c: { username: string | null; passwordSealed: string | null }) => {
    if ((c.username === null) !== (c.passwordSealed === null))
      throw invalid(field, 'digest credentials need both a username and a password');
  };
  pair('inbound', s.inbound);
  if (s.outbound) pair('outbound', s.outbound);
  if (s.inbound.addresses.length === 0 && s.inbound.username === null && s.outbound === null)
    throw invalid('inbound', 'a carrier needs inbound addresses or credentials, or an outbound gateway');
  return s;
}

/** The section a change gives, with the stored password kept where the change leaves it out. */
function withPassword<T extends { username: string | null; passwordSealed: string | null }>(
  given: Omit<T, 'passwordSealed'> & { passwordSealed?: string | null },
  stored: T | null,
): T {
  if (given.passwordSealed !== undefined) return { ...given, passwordSealed: given.passwordSealed } as T;
  const keep = stored !== null && stored.username === given.username ? stored.passwordSealed : null;
  return { ...given, passwordSealed: given.username === null ? null : keep } as T;
}

const same = (a: CarrierSettings, b: CarrierSettings) => JSON.stringify(a) === JSON.stringify(b);

export const carrierDecider: Decider<CarrierCommand, CarrierEvent, CarrierState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    const { carrierId } = cmd.data;
    switch (cmd.type) {
      case 'CreateCarrier':
        if (s.status === 'active') throw new DomainError('CARRIER_EXISTS', `A carrier ${carrierId} exists already; change it with PATCH`);
        return [{ type: 'CarrierCreated', data: { carrierId, settings: checked(cmd.data.settings), createdAt: now } }];
      case 'ChangeCarrier': {
        if (s.status !== 'active') throw notFound(carrierId);
        const c = cmd.data.changes;
        const next: CarrierSettings = {
          name: c.name ?? s.settings.name,
          inbound: c.inbound ? withPassword(c.inbound, s.settings.inbound) : s.settings.inbound,
          outbound:
            c.outbound === undefined ? s.settings.outbound : c.outbound === null ? null : withPassword(c.outbound, s.settings.outbound),
          numberFormat: c.numberFormat ?? s.settings.numberFormat,
        };
        if (same(next, s.settings)) return [];
        return [{ type: 'CarrierChanged', data: { carrierId, settings: checked(next), changedAt: now } }];
      }
      case 'DeleteCarrier':
        if (s.status !== 'active') throw notFound(carrierId);
        return [{ type: 'CarrierDeleted', data: { carrierId, deletedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'CarrierCreated':
        return { status: 'active', carrierId: e.data.carrierId, settings: e.data.settings, createdAt: e.data.createdAt };
      case 'CarrierChanged':
        return s.status === 'none' ? s : { ...s, settings: e.data.settings };
      case 'CarrierDeleted':
        return s.status === 'none' ? s : { ...s, status: 'deleted' };
      default:
        return assertNever(e);
    }
  },
};
