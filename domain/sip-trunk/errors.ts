/** Error codes of SIP trunks (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    SIP_TRUNK_NOT_FOUND: true;
    SIP_TRUNK_CONFLICT: true;
  }
}
export type SipTrunkErrorCode = 'SIP_TRUNK_NOT_FOUND' | 'SIP_TRUNK_CONFLICT';
