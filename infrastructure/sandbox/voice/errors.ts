/**
 * Error codes of the sandbox voice API (docs/sandbox.md#voice). The sandbox has no domain of its own, so its
 * codes are declared beside its module; they join the shared list the same way a domain's do.
 */
declare module '../../../domain/shared/errors.js' {
  interface ErrorCodes {
    /** the platform refused a sandbox inbound call, or nothing in the process takes inbound calls */
    SANDBOX_CALL_REFUSED: true;
    /** a sandbox control on a call that is still ringing, failed or has ended */
    SANDBOX_CALL_NOT_CONNECTED: true;
  }
}
export type SandboxVoiceErrorCode = 'SANDBOX_CALL_REFUSED' | 'SANDBOX_CALL_NOT_CONNECTED';
