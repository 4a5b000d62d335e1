/** Error codes of phone numbers (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    PHONE_NUMBER_NOT_FOUND: true;
    NUMBER_UNAVAILABLE: true;
    PHONE_NUMBER_RELEASED: true;
    NUMBER_PROVISIONING_PENDING: true;
  }
}
export type PhoneNumberErrorCode =
  | 'PHONE_NUMBER_NOT_FOUND'
  | 'NUMBER_UNAVAILABLE'
  | 'PHONE_NUMBER_RELEASED'
  | 'NUMBER_PROVISIONING_PENDING';
