import type { Capability } from '../../capabilities/capability.js';
import { registerUrlOf } from '../../config/config.js';
import * as m160 from '../../db/migrations/160-twilio-submissions.js';
import { MESSAGING } from '../../messaging/tokens.js';
import { PLATFORM } from '../../platform/tokens.js';
import { twilioCallbackRoutes } from './callbacks.routes.js';
import { twilioSettingsOf } from './settings.js';
import { TWILIO } from './tokens.js';
import { TwilioApi } from './twilio-api.js';
import { TwilioNumbers } from './twilio-numbers.js';
import { TwilioTexts } from './twilio-texts.js';

/**
 * Twilio as the carrier (docs/carriers.md): with `CARRIER=twilio` (live mode), numbers, line-type lookups and texts
 * go through Twilio's REST API, and Twilio's signed callbacks (inbound texts, statuses) come in at PUBLIC_URL.
 * Another carrier is a folder like this one beside it.
 */
export const twilioCarrier = {
  name: 'twilio-carrier',
  bind: (b, cfg) => {
    if (cfg.CARRIER !== 'twilio') return;
    const settings = twilioSettingsOf(cfg);
    b.value(TWILIO.Api, new TwilioApi(settings.api));
    b.factory(
      TWILIO.Numbers,
      (r) =>
        new TwilioNumbers(
          r(TWILIO.Api),
          { smsUrl: settings.smsUrl, sipTrunkSid: settings.sipTrunkSid, messagingServiceSid: settings.messagingServiceSid },
          r(PLATFORM.Logger),
        ),
    );
    b.factory(
      TWILIO.Texts,
      (r) =>
        new TwilioTexts(r(TWILIO.Api), r(PLATFORM.ReadDb), r(PLATFORM.Clock), r(PLATFORM.Logger), {
          statusUrl: settings.statusUrl,
          registerUrl: registerUrlOf(cfg),
        }),
    );
  },
  // CARRIER=twilio chooses it (docs/adding-a-channel.md#a-carrier-for-texts)
  carriers: (cfg) =>
    cfg.CARRIER === 'twilio' ? [{ name: 'twilio', numbers: (r) => r(TWILIO.Numbers), texts: (r) => r(TWILIO.Texts) }] : [],
  routes: {
    public: (api, r) => {
      const cfg = r(PLATFORM.Config);
      if (cfg.CARRIER !== 'twilio') return;
      const settings = twilioSettingsOf(cfg);
      twilioCallbackRoutes(api, {
        messages: () => r(MESSAGING.Inbound),
        sentHere: (sid) => r(TWILIO.Texts).sentHere(sid),
        clock: r(PLATFORM.Clock),
        log: r(PLATFORM.Logger),
        accountSid: settings.api.accountSid,
        authToken: settings.authToken,
        publicUrl: settings.publicUrl,
        registerUrl: registerUrlOf(cfg),
      });
    },
  },
  close: (r) => {
    if (r(PLATFORM.Config).CARRIER === 'twilio') r(TWILIO.Api).close();
  },
  migrations: { '160-twilio-submissions': m160 },
} as const satisfies Capability;
