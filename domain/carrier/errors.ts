/** Error codes of the carriers the SIP engine takes calls from and dials through (docs/sip.md#carriers). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    CARRIER_NOT_FOUND: true;
    CARRIER_EXISTS: true;
    CARRIER_CONFIGURED: true;
    CARRIER_IN_USE: true;
  }
}
export type CarrierErrorCode = 'CARRIER_NOT_FOUND' | 'CARRIER_EXISTS' | 'CARRIER_CONFIGURED' | 'CARRIER_IN_USE';
