import type { SipTrunkProviderPort } from '../../application/sip-trunks/sip-trunk-provider.port.js';

/**
 * SIP trunks in live mode with the SIP engine (docs/sip.md#sip-trunks): the platform's own engine runs them, so there
 * is nothing to create, change or delete upstream. A trunk's record is what the engine works from: an inbound call
 * for a number routed to the trunk is bridged to its origination URIs, and transfers follow its `transfers` and
 * `transfer_caller_id` rules. Its termination URI names this engine (`sip:<trunk id>@<SIP_PUBLIC_ADDRESS>:<SIP_PORT>`).
 */
export class EngineSipTrunks implements SipTrunkProviderPort {
  constructor(
    private readonly publicAddress: string,
    private readonly port: number,
  ) {}

  async createTrunk(o: { trunkId: string }): Promise<{ providerRef: string; terminationUri: string }> {
    const host = this.publicAddress.includes(':') ? `[${this.publicAddress}]` : this.publicAddress;
    return { providerRef: `engine:${o.trunkId}`, terminationUri: `sip:${o.trunkId}@${host}:${this.port}` };
  }

  async updateTrunk(): Promise<void> {}

  async deleteTrunk(): Promise<void> {}
}
