import { readFileSync } from 'node:fs';
import { NumberImports } from '../../application/numbers/number-imports.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { AGENTS } from '../agents/tokens.js';
import { CALLS } from '../calls/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import { type Config, sipConfigured } from '../config/config.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { WEB_CALLS } from '../web-calls/tokens.js';
import { type Carrier, type CarrierDirectory, parseCarrierList } from './carriers.js';
import { RtpPorts } from './rtp-session.js';
import { sipAdminRoutes } from './sip-admin.routes.js';
import { SipEngine } from './sip-engine.js';
import { SIP } from './tokens.js';

/** The carriers of the start-up configuration: `SIP_CARRIERS` (JSON) and the file `SIP_CARRIERS_FILE` names. */
export function configuredCarriers(cfg: Config): Carrier[] {
  const list: Carrier[] = [];
  if (cfg.SIP_CARRIERS) list.push(...parseCarrierList(cfg.SIP_CARRIERS, 'SIP_CARRIERS'));
  if (cfg.SIP_CARRIERS_FILE) {
    let text: string;
    try {
      text = readFileSync(cfg.SIP_CARRIERS_FILE, 'utf8');
    } catch (err) {
      throw new Error(`SIP_CARRIERS_FILE=${cfg.SIP_CARRIERS_FILE} cannot be read: ${(err as Error).message}`);
    }
    list.push(...parseCarrierList(text, `SIP_CARRIERS_FILE (${cfg.SIP_CARRIERS_FILE})`));
  }
  return list;
}

/** The roles that hold SIP signalling and media (docs/operations.md#roles). */
const holdsCalls = (cfg: Config) => cfg.ROLE === 'all' || cfg.ROLE === 'voice';

/**
 * The SIP voice engine (docs/sip.md): in live mode with SIP_PUBLIC_ADDRESS, the calls capability's voice engine.
 * Its SIP ports open when a process of role `all` or `voice` starts, and close when it stops.
 */
export const sip = {
  name: 'sip',
  bind: (b, cfg) => {
    if (!sipConfigured(cfg)) return;
    const fromConfig = configuredCarriers(cfg);
    b.value(SIP.Carriers, { list: async () => fromConfig } satisfies CarrierDirectory);
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
          carriers: r(SIP.Carriers),
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
          log: r(PLATFORM.Logger),
        }),
    );
  },
  routes: {
    admin: (api, r) => {
      if (!sipConfigured(r(PLATFORM.Config))) return;
      const carriers = r(SIP.Carriers);
      sipAdminRoutes(api, {
        carriers,
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
    if (!sipConfigured(cfg) || !holdsCalls(cfg)) return;
    // the call commands plan inbound calls: built now, so the first INVITE finds them
    r(CALLS.Commands);
    await r(SIP.Engine).start();
  },
  close: async (r) => {
    const cfg = r(PLATFORM.Config);
    if (sipConfigured(cfg) && holdsCalls(cfg)) await r(SIP.Engine).close();
  },
} as const satisfies Capability;
