import type { Capability } from '../../capabilities/capability.js';
import { registerUrlOf } from '../../config/config.js';
import * as m160 from '../../db/migrations/160-twilio-submissions.js';
import { UnconfiguredSmsCarrier } from '../../messaging/unconfigured-sms-carrier.js';
import { PLATFORM } from '../../platform/tokens.js';
import { twilioSettingsOf } from './settings.js';
import { TWILIO } from './tokens.js';
import { TwilioApi } from './twilio-api.js';
import { TwilioNumbers } from './twilio-numbers.js';
import { TwilioTexts } from './twilio-texts.js';

/**
 * Twilio as the carrier (docs/carriers.md): with `CARRIER=twilio` (live mode), numbers and line-type lookups go
 * through Twilio's REST API. Another carrier is a folder like this one beside it.
 */
export const twilioCarrier = {
  name: 'twilio-carrier',
  bind: (b, cfg) => {
    if (cfg.CARRIER !== 'twilio') return;
    const settings = twilioSettingsOf(cfg);
    b.value(TWILIO.Api, new TwilioApi(settings.api));
    b.factory(
      TWILIO.Numbers,
      (r) => new TwilioNumbers(r(TWILIO.Api), { smsUrl: settings.smsUrl, sipTrunkSid: settings.sipTrunkSid }, r(PLATFORM.Logger)),
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
  // CARRIER=twilio chooses it (docs/adding-a-channel.md#a-carrier-for-texts); texts come with the callbacks
  carriers: (cfg) =>
    cfg.CARRIER === 'twilio' ? [{ name: 'twilio', numbers: (r) => r(TWILIO.Numbers), texts: () => new UnconfiguredSmsCarrier() }] : [],
  migrations: { '160-twilio-submissions': m160 },
} as const satisfies Capability;
