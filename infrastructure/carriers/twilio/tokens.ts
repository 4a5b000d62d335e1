import { token } from '../../capabilities/token.js';
import type { TwilioApi } from './twilio-api.js';
import type { TwilioNumbers } from './twilio-numbers.js';
import type { TwilioTexts } from './twilio-texts.js';

/** The Twilio carrier's tokens (its module binds them when CARRIER=twilio). */
export const TWILIO = {
  Api: token<TwilioApi>('TwilioApi'),
  Numbers: token<TwilioNumbers>('TwilioNumbers'),
  Texts: token<TwilioTexts>('TwilioTexts'),
} as const;
