import {
  type CarrierChanges,
  type CarrierInbound,
  type CarrierNumberFormat,
  type CarrierOutbound,
  type CarrierSettings,
  carrierDecider,
  carrierStream,
} from '../../domain/carrier/carrier.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { CarrierQueries, CarrierRecord, CredentialSealerPort } from './carriers.port.js';

/** Credentials as the operator gives them: a password in plain, sealed before anything records it. */
type WithPassword<T> = Omit<T, 'passwordSealed'> & { password?: string | null };
export type CarrierInboundInput = WithPassword<CarrierInbound>;
export type CarrierOutboundInput = WithPassword<CarrierOutbound>;

export type NewCarrier = Readonly<{
  carrierId: string;
  name: string;
  inbound: CarrierInboundInput;
  outbound: CarrierOutboundInput | null;
  numberFormat: CarrierNumberFormat;
}>;

export type CarrierChangesInput = Readonly<{
  name?: string;
  inbound?: CarrierInboundInput;
  outbound?: CarrierOutboundInput | null;
  numberFormat?: CarrierNumberFormat;
}>;

/** A carrier as the operator API shows it: never a password, only whether one is set. */
export type CarrierView = Readonly<{
  id: string;
  name: string;
  /** `api`: configured through the API; `configuration`: SIP_CARRIERS / SIP_CARRIERS_FILE (read-only here) */
  source: 'api' | 'configuration';
  inbound: Readonly<{ addresses: readonly string[]; username: string | null; hasPassword: boolean }>;
  outbound: Readonly<
    Omit<CarrierOutbound, 'passwordSealed'> & {
      hasPassword: boolean;
    }
  > | null;
  numberFormat: CarrierNumberFormat;
  createdAt: string | null;
  updatedAt: string | null;
}>;

/** A carrier's outbound gateway as the API shows it: its password only as whether one is set. */
export const outboundView = (out: Omit<CarrierOutbound, 'passwordSealed'>, hasPassword: boolean): CarrierView['outbound'] => ({
  host: out.host,
  port: out.port,
  transport: out.transport,
  username: out.username,
  hasPassword,
  register: out.register,
  registerExpiresSeconds: out.registerExpiresSeconds,
});

/** A carrier recorded through the API, as the API shows it. */
export const carrierView = (c: CarrierRecord): CarrierView => {
  const { passwordSealed: inboundPassword, ...inbound } = c.settings.inbound;
  const out = c.settings.outbound;
  return {
    id: c.carrierId,
    name: c.settings.name,
    source: 'api',
    inbound: { ...inbound, addresses: [...inbound.addresses], hasPassword: inboundPassword !== null },
    outbound: out ? outboundView(out, out.passwordSealed !== null) : null,
    numberFormat: c.settings.numberFormat,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
};

/**
 * The operator's carriers (docs/sip.md#carriers): created, changed and deleted through the admin API, event-sourced
 * on `carrier-<id>`, passwords sealed before they are recorded. The carriers of the start-up configuration
 * (SIP_CARRIERS, SIP_CARRIERS_FILE) are listed beside them and win: their ids cannot be taken, changed or deleted
 * here. A carrier with imported numbers is not deleted (their calls would have no way in or out).
 */
export class Carriers {
  constructor(
    private readonly d: Readonly<{
      exec: CommandExecutor;
      queries: CarrierQueries;
      sealer: CredentialSealerPort;
      /** the carriers of the start-up configuration, as the API shows them */
      configured: () => readonly CarrierView[];
    }>,
  ) {}

  async list(): Promise<CarrierView[]> {
    const configured = this.d.configured();
    const taken = new Set(configured.map((c) => c.id));
    const stored = (await this.d.queries.list()).filter((c) => !taken.has(c.carrierId));
    return [...configured, ...stored.map((c) => carrierView(c))].sort((a, b) => a.id.localeCompare(b.id));
  }

  async get(carrierId: string): Promise<CarrierView> {
    const configured = this.configured(carrierId);
    if (configured) return configured;
    const c = await this.d.queries.get(carrierId);
    if (!c) throw new DomainError('CARRIER_NOT_FOUND', `No carrier ${carrierId}`);
    return carrierView(c);
  }

  async create(ctx: RequestContext, c: NewCarrier): Promise<CarrierView> {
    this.refuseConfigured(c.carrierId);
    const settings: CarrierSettings = {
      name: c.name,
      inbound: this.sealed(c.inbound),
      outbound: c.outbound ? this.sealed(c.outbound) : null,
      numberFormat: c.numberFormat,
    };
    await this.d.exec.execute(
      carrierDecider,
      carrierStream(c.carrierId),
      { type: 'CreateCarrier', data: { carrierId: c.carrierId, settings } },
      ctx,
      { readYourWrites: true },
    );
    return this.get(c.carrierId);
  }

  async change(ctx: RequestContext, carrierId: string, c: CarrierChangesInput): Promise<CarrierView> {
    this.refuseConfigured(carrierId);
    const changes: CarrierChanges = {
      ...(c.name !== undefined ? { name: c.name } : {}),
      ...(c.inbound ? { inbound: this.sealedChange(c.inbound) } : {}),
      ...(c.outbound !== undefined ? { outbound: c.outbound === null ? null : this.sealedChange(c.outbound) } : {}),
      ...(c.numberFormat ? { numberFormat: c.numberFormat } : {}),
    };
    await this.d.exec.execute(carrierDecider, carrierStream(carrierId), { type: 'ChangeCarrier', data: { carrierId, changes } }, ctx, {
      readYourWrites: true,
    });
    return this.get(carrierId);
  }

  async remove(ctx: RequestContext, carrierId: string): Promise<void> {
    this.refuseConfigured(carrierId);
    const numbers = await this.d.queries.numbersOf(carrierId);
    if (numbers > 0)
      throw new DomainError(
        'CARRIER_IN_USE',
        `${numbers} active number${numbers === 1 ? ' was' : 's were'} imported with carrier ${carrierId}: release ${numbers === 1 ? 'it' : 'them'} first`,
      );
    await this.d.exec.execute(carrierDecider, carrierStream(carrierId), { type: 'DeleteCarrier', data: { carrierId } }, ctx, {
      readYourWrites: true,
    });
  }

  private configured(carrierId: string): CarrierView | undefined {
    return this.d.configured().find((c) => c.id === carrierId);
  }

  private refuseConfigured(carrierId: string): void {
    if (this.configured(carrierId))
      throw new DomainError(
        'CARRIER_CONFIGURED',
        `Carrier ${carrierId} comes from the start-up configuration (SIP_CARRIERS or SIP_CARRIERS_FILE), which wins over the API: change it there and restart`,
      );
  }

  private sealed<T extends { password?: string | null }>(s: T): Omit<T, 'password'> & { passwordSealed: string | null } {
    const { password, ...rest } = s;
    return { ...rest, passwordSealed: password ? this.d.sealer.seal(password) : null };
  }

  /** a password left out stays left out: the decider keeps the stored one */
  private sealedChange<T extends { password?: string | null }>(s: T): Omit<T, 'password'> & { passwordSealed?: string | null } {
    const { password, ...rest } = s;
    return password === undefined ? rest : { ...rest, passwordSealed: password === null ? null : this.d.sealer.seal(password) };
  }
}
