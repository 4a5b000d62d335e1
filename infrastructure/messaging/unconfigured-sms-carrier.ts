import { injectable } from 'inversify';
import { NOT_ENABLED_REASON } from '../../application/messaging/failures.js';
import { type SmsCarrierPort, SmsSubmissionError } from '../../application/messaging/sms-carrier.port.js';

/** PROVIDER_MODE=live with no real carrier adapter yet: every send fails as not enabled, never simulated. */
@injectable()
export class UnconfiguredSmsCarrier implements SmsCarrierPort {
  async submit(): Promise<never> {
    throw new SmsSubmissionError(NOT_ENABLED_REASON, null);
  }
}
