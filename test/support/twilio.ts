import { FAKE_ACCOUNT_SID, FAKE_AUTH_TOKEN, FAKE_TRUNK_SID, type FakeTwilio, startFakeTwilio } from './fake-twilio.js';
import { useContractMocks } from './prism.js';

/** Twilio's published API documents, vendored (test/contracts/twilio/SOURCE), and the operations the carrier adapter speaks. */
export const TWILIO_DOCUMENTS = {
  api: {
    document: 'test/contracts/twilio/twilio_api_v2010.json',
    operations: [
      'ListAvailablePhoneNumberLocal',
      'CreateIncomingPhoneNumber',
      'ListIncomingPhoneNumber',
      'UpdateIncomingPhoneNumber',
      'DeleteIncomingPhoneNumber',
      'CreateMessage',
      'ListMessage',
    ],
  },
  lookups: { document: 'test/contracts/twilio/twilio_lookups_v2.json', operations: ['FetchPhoneNumber'] },
  trunking: { document: 'test/contracts/twilio/twilio_trunking_v1.json', operations: ['CreatePhoneNumber'] },
  messaging: { document: 'test/contracts/twilio/twilio_messaging_v1.json', operations: ['FetchPhoneNumber', 'CreatePhoneNumber'] },
} as const;

/** The public URL the platform gives Twilio in the tests: Twilio signs over it; the fake delivers to the real address. */
export const TWILIO_PUBLIC_URL = 'https://platform.example.test';

/**
 * In a `describe`: the four contract mocks of Twilio's documents (each test fails if a document refused a request it
 * sent) and the fake Twilio in front of them (test/support/fake-twilio.ts), started once for the block.
 */
export function useFakeTwilio(): () => FakeTwilio {
  const mocks = useContractMocks({
    api: { name: 'Twilio API v2010 mock', ...TWILIO_DOCUMENTS.api },
    lookups: { name: 'Twilio Lookups v2 mock', ...TWILIO_DOCUMENTS.lookups },
    trunking: { name: 'Twilio Trunking v1 mock', ...TWILIO_DOCUMENTS.trunking },
    messaging: { name: 'Twilio Messaging v1 mock', ...TWILIO_DOCUMENTS.messaging },
  });
  let fake: FakeTwilio | null = null;
  before(async () => {
    fake = await startFakeTwilio({ mocks });
  });
  after(async () => {
    await fake?.close();
  });
  return () => {
    if (!fake) throw new Error('the fake Twilio has not started');
    return fake;
  };
}

/** What a live start on the fake Twilio is configured with (docs/carriers.md#going-live, with the hosts moved). */
export const twilioEnv = (fake: FakeTwilio, o: { trunk?: boolean } = {}): Record<string, string> => ({
  PROVIDER_MODE: 'live',
  CARRIER: 'twilio',
  PUBLIC_URL: TWILIO_PUBLIC_URL,
  TWILIO_ACCOUNT_SID: FAKE_ACCOUNT_SID,
  TWILIO_AUTH_TOKEN: FAKE_AUTH_TOKEN,
  TWILIO_API_BASE_URL: fake.url,
  TWILIO_LOOKUPS_BASE_URL: fake.url,
  TWILIO_TRUNKING_BASE_URL: fake.url,
  TWILIO_MESSAGING_BASE_URL: fake.url,
  TWILIO_MESSAGING_SERVICE_SID: fake.messagingServiceSid,
  TWILIO_REQUEST_TIMEOUT_MS: '5000',
  ...(o.trunk === false ? {} : { TWILIO_SIP_TRUNK_SID: FAKE_TRUNK_SID }),
});
