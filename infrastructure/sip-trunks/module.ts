import { SipTrunkCommands } from '../../application/sip-trunks/sip-trunk-commands.js';
import { SipTrunkProcess } from '../../application/sip-trunks/sip-trunk-process.js';
import type { SipTrunkErrorCode } from '../../domain/sip-trunk/errors.js';
import { KyselySipTrunkQueries } from '../../projections/sip-trunks/sip-trunk.queries.js';
import { sipTrunksProjector } from '../../projections/sip-trunks/sip-trunks.projector.js';
import { AesGcmSealer } from '../adapters/sealed-secrets.js';
import { secretKeys } from '../adapters/secret-keys.js';
import type { Capability } from '../capabilities/capability.js';
import { sipConfigured } from '../config/config.js';
import * as m161 from '../db/migrations/161-sip-trunk-termination.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { UnconfiguredSipTrunks } from '../providers/unconfigured-telecom.js';
import { SANDBOX } from '../sandbox/tokens.js';
import { EngineSipTrunks } from '../sip/engine-sip-trunks.js';
import { sipTrunkRoutes } from './sip-trunks.routes.js';
import { SIP_TRUNKS } from './tokens.js';

/** SIP trunks: the customer's own SIP infrastructure that numbers route calls to (docs/numbers.md). */
export const sipTrunks = {
  name: 'sip-trunks',
  bind: (b, cfg) => {
    if (cfg.PROVIDER_MODE === 'sandbox') b.alias(SIP_TRUNKS.Provider, SANDBOX.SipTrunks);
    else if (sipConfigured(cfg)) {
      // the SIP engine runs the trunks itself (docs/sip.md#sip-trunks)
      b.value(SIP_TRUNKS.Provider, new EngineSipTrunks(cfg.SIP_PUBLIC_ADDRESS!, cfg.SIP_PORT));
    } else b.toClass(SIP_TRUNKS.Provider, UnconfiguredSipTrunks);
    b.factory(SIP_TRUNKS.Queries, (r) => new KyselySipTrunkQueries(r(PLATFORM.ReadDb)));
    // termination passwords are SIP credentials, sealed as the carriers' are (docs/security.md#secrets-at-rest-secrets_key)
    const sealer = new AesGcmSealer(secretKeys(cfg.SECRETS_KEY).sipCredentials, 'SIP credential');
    b.factory(
      SIP_TRUNKS.Commands,
      (r) =>
        new SipTrunkCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(SIP_TRUNKS.Queries), sealer, {
          providerTimeoutMs: cfg.NUMBER_PROVISIONING_TIMEOUT_MS,
        }),
    );
  },
  routes: {
    v1: (api, r) => sipTrunkRoutes(api, { commands: r(SIP_TRUNKS.Commands), queries: r(SIP_TRUNKS.Queries) }),
  },
  projectors: [sipTrunksProjector],
  migrations: { '161-sip-trunk-termination': m161 },
  reactors: (r) => [new SipTrunkProcess(r(PLATFORM.Executor), r(SIP_TRUNKS.Provider))],
  errors: {
    SIP_TRUNK_NOT_FOUND: { ...httpError.notFound, fix: 'Check the trunk id: GET /v1/sip-trunks lists the trunks of this account.' },
    SIP_TRUNK_CONFLICT: httpError.conflict,
  } satisfies Record<SipTrunkErrorCode, unknown>,
} as const satisfies Capability;
