import type { Carriers } from '../../application/carriers/carriers.js';
import type { CarrierQueries } from '../../application/carriers/carriers.port.js';
import { token } from '../capabilities/token.js';
import type { CarrierDirectory } from './carriers.js';
import type { SipEngine } from './sip-engine.js';
import type { TrunkDirectory } from './trunk-book.js';

/** The SIP capability's tokens (its module binds them). */
export const SIP = {
  /** the SIP voice engine (live mode with SIP_PUBLIC_ADDRESS) */
  Engine: token<SipEngine>('SipEngine'),
  /** the carriers the engine takes calls from and dials through */
  Carriers: token<CarrierDirectory>('CarrierDirectory'),
  /** the SIP trunks' termination sides: who may send calls out through a trunk (docs/sip.md#calls-from-your-pbx) */
  Trunks: token<TrunkDirectory>('TrunkDirectory'),
  /** the carriers recorded through the operator API (the read model) */
  CarrierQueries: token<CarrierQueries>('CarrierQueries'),
  /** the operator API's service over carriers */
  CarrierAdmin: token<Carriers>('CarrierAdmin'),
} as const;
