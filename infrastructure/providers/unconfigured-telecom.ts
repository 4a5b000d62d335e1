import { injectable } from 'inversify';
import type { CarrierPort } from '../../application/numbers/carrier.port.js';
import type { SipTrunkProviderPort } from '../../application/sip-trunks/sip-trunk-provider.port.js';
import { DomainError } from '../../domain/shared/errors.js';

/**
 * PROVIDER_MODE=live with no carrier chosen (CARRIER) or no SIP provider adapter: every call fails as the upstream
 * error it is (502), instead of silently falling back to the simulation.
 */
@injectable()
export class UnconfiguredCarrier implements CarrierPort {
  private fail(): never {
    throw new DomainError(
      'SMS_PROVIDER_ERROR',
      'No live carrier is configured (PROVIDER_MODE=live without CARRIER): set CARRIER=twilio (docs/carriers.md), or use sandbox mode',
    );
  }
  async searchAvailable(): Promise<never> {
    return this.fail();
  }
  async purchase(): Promise<never> {
    return this.fail();
  }
  async findPurchase(): Promise<null> {
    return null;
  }
  async configureRouting(): Promise<never> {
    return this.fail();
  }
  async release(): Promise<never> {
    return this.fail();
  }
  async lookup(): Promise<never> {
    return this.fail();
  }
}

@injectable()
export class UnconfiguredSipTrunks implements SipTrunkProviderPort {
  private fail(): never {
    throw new DomainError('TELEPHONY_PROVIDER_ERROR', 'No live SIP trunk provider is configured (PROVIDER_MODE=live)');
  }
  async createTrunk(): Promise<never> {
    return this.fail();
  }
  async updateTrunk(): Promise<never> {
    return this.fail();
  }
  async deleteTrunk(): Promise<never> {
    return this.fail();
  }
}
