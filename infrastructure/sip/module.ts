import { readFileSync } from 'node:fs';
import { Carriers } from '../../application/carriers/carriers.js';
import { NumberImports } from '../../application/numbers/number-imports.js';
import type { CarrierErrorCode } from '../../domain/carrier/errors.js';
import { KyselyCarrierQueries } from '../../projections/carriers/carrier.queries.js';
import { carriersProjector } from '../../projections/carriers/carriers.projector.js';
import { KyselySipTrunkQueries } from '../../projections/sip-trunks/sip-trunk.queries.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { AesGcmSealer } from '../adapters/sealed-secrets.js';
import { secretKeys } from '../adapters/secret-keys.js';
import { AGENTS } from '../agents/tokens.js';
import { CALLS } from '../calls/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import { type Config, holdsLines, sipConfigured } from '../config/config.js';
import * as m150 from '../db/migrations/150-sip-carriers.js';
import { httpError } from '../http/errors.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { WEB_CALLS } from '../web-calls/tokens.js';
import { type Carrier, CarrierBook, configuredView, distinctCarriers, parseCarrierList } from './carriers.js';
import { RtpPorts } from './rtp-session.js';
import { sipAdminRoutes } from './sip-admin.routes.js';
import { SipEngine } from './sip-engine.js';
import { SIP } from './tokens.js';
import { TrunkBook } from './trunk-book.js';

/** The carriers of the start-up configuration: `SIP_CARRIERS` (JSON) and the file `SIP_CARRIERS_FILE` names. */
export function configuredCarriers(cfg: Config): Carrier[] {
  const lists: { source: string; carriers: Carrier[] }[] = [];
  if (cfg.SIP_CARRIERS) lists.push({ source: 'SIP_CARRIERS', carriers: parseCarrierList(cfg.SIP_CARRIERS, 'SIP_CARRIERS') });
  if (cfg.SIP_CARRIERS_FILE) {
    let text: string;
    try {
      text = readFileSync(cfg.SIP_CARRIERS_FILE, 'utf8');
    } catch (err) {
      throw new Error(`SIP_CARRIERS_FILE=${cfg.SIP_CARRIERS_FILE} cannot be read: ${(err as Error).message}`);
    }
    const source = `SIP_CARRIERS_FILE (${cfg.SIP_CARRIERS_FILE})`;
    lists.push({ source, carriers: parseCarrierList(text, source) });
  }
  return distinctCarriers(lists);
}

/**
 * The SIP voice engine (docs/sip.md): in live mode with SIP_PUBLIC_ADDRESS, the calls capability's voice engine.
 * Its SIP ports open when a process of role `all` or `voice` starts, and close when it stops. The carriers and
 * number imports of the operator API are there in every mode (an operator may set them up before going live).
 */
export const sip = {
  name: 'sip',
  bind: (b, cfg) => {
    const fromConfig = configuredCarriers(cfg);
    const sealer = new AesGcmSealer(secretKeys(cfg.SECRETS_KEY).sipCredentials, 'SIP carrier password');
    b.factory(SIP.CarrierQueries, (r) => new KyselyCarrierQueries(r(PLATFORM.ReadDb)));
    b.factory(SIP.Carriers, (r) => new CarrierBook(fromConfig, r(SIP.CarrierQueries), (sealed) => sealer.open(sealed), r(PLATFORM.Logger)));
    b.factory(
      SIP.Trunks,
      (r) => new TrunkBook(new KyselySipTrunkQueries(r(PLATFORM.ReadDb)), (sealed) => sealer.open(sealed), r(PLATFORM.Logger)),
    );
    b.factory(
      SIP.CarrierAdmin,
      (r) =>
        new Carriers({
          exec: r(PLATFORM.Executor),
          queries: r(SIP.CarrierQueries),
          sealer,
          configured: () => fromConfig.map(configuredView),
        }),
    );
    if (!sipConfigured(cfg)) return;
    b.factory(
      SIP.Engine,
      (r) =>
        new SipEngine({
          address: cfg.SIP_ADDRESS,
          port: cfg.SIP_PORT,
          udp: cfg.SIP_TRANSPORTS.includes('udp'),
          tcp: cfg.SIP_TRANSPORTS.includes('tcp'),
          publicAddress: cfg.SIP_PUBLIC_ADDRESS!,
          rtpAddress: cfg.SIP_ADDRESS,
          rtpPorts: new RtpPorts(cfg.RTP_PORT_MIN, cfg.RTP_PORT_MAX),
          ringMs: cfg.SIP_RING_MS,
          trunkTimeouts: { respondMs: cfg.SIP_TRUNK_RESPOND_MS, answerMs: cfg.SIP_TRUNK_ANSWER_MS },
          carriers: r(SIP.Carriers),
          trunks: r(SIP.Trunks),
          carrierOfNumber: async (e164) => {
            const row = await r(PLATFORM.ReadDb)
              .selectFrom('phone_numbers')
              .select('carrier_id')
              .where('phone_number', '=', e164)
              .where('status', '=', 'active')
              .executeTakeFirst();
            return row?.carrier_id ?? null;
          },
          speech: {
            tts: r(WEB_CALLS.TextToSpeech),
            stt: r(WEB_CALLS.SpeechToText),
            log: r(PLATFORM.Logger),
            endSilenceMs: cfg.SIP_END_SILENCE_MS,
          },
          nonceKey: secretKeys(cfg.SECRETS_KEY).sipNonces,
          log: r(PLATFORM.Logger),
        }),
    );
  },
  routes: {
    admin: (api, r) => {
      const carriers = r(SIP.Carriers);
      sipAdminRoutes(api, {
        carriers: r(SIP.CarrierAdmin),
        imports: new NumberImports({
          exec: r(PLATFORM.Executor),
          ids: r(PLATFORM.Ids),
          numbers: r(NUMBERS.Queries),
          accounts: r(ACCOUNTS.Queries),
          agents: r(AGENTS.Queries),
          carrierExists: async (id) => (await carriers.list()).some((c) => c.id === id),
        }),
      });
    },
  },
  start: async (r) => {
    const cfg = r(PLATFORM.Config);
    if (!sipConfigured(cfg) || !holdsLines(cfg)) return;
    // the call commands plan inbound calls: built now, so the first INVITE finds them
    r(CALLS.Commands);
    await r(SIP.Engine).start();
  },
  close: async (r) => {
    const cfg = r(PLATFORM.Config);
    if (sipConfigured(cfg) && holdsLines(cfg)) await r(SIP.Engine).close();
  },
  projectors: [carriersProjector],
  migrations: { '150-sip-carriers': m150 },
  errors: {
    CARRIER_NOT_FOUND: { ...httpError.notFound, fix: 'GET /admin/carriers lists the carriers.' },
    CARRIER_EXISTS: { ...httpError.conflict, fix: 'Change it with PATCH /admin/carriers/{id}, or pick another id.' },
    CARRIER_CONFIGURED: httpError.conflict,
    CARRIER_IN_USE: httpError.conflict,
  } satisfies Record<CarrierErrorCode, unknown>,
} as const satisfies Capability;
