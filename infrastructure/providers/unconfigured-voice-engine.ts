import {
  type CallLeg,
  type InboundDecision,
  type InboundOffer,
  TelephonyError,
  type VoiceEnginePort,
} from '../../application/calls/voice-engine.port.js';

/**
 * PROVIDER_MODE=live without the SIP engine's configuration (docs/sip.md#configuration): placing a call fails as the upstream error it is (502,
 * `TELEPHONY_PROVIDER_ERROR`), and no inbound call ever arrives, instead of falling back to the simulation.
 */
export class UnconfiguredVoiceEngine implements VoiceEnginePort {
  async dial(): Promise<CallLeg> {
    throw new TelephonyError(
      'No live voice engine is configured (PROVIDER_MODE=live): set SIP_PUBLIC_ADDRESS and a carrier (SIP_CARRIERS_FILE, or POST /admin/carriers) to run the SIP engine (docs/sip.md)',
      false,
    );
  }
  onInbound(_handler: (offer: InboundOffer) => Promise<InboundDecision>): void {}
  async close(): Promise<void> {}
}
