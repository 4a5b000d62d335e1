/** Error codes of US A2P 10DLC registration (docs/registration.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    /** a different registration is already under review for the account */
    REGISTRATION_IN_REVIEW: true;
    /** the account already has a different, approved registration */
    REGISTRATION_ALREADY_APPROVED: true;
    REGISTRATION_NOT_FOUND: true;
  }
}
export type RegistrationErrorCode = 'REGISTRATION_IN_REVIEW' | 'REGISTRATION_ALREADY_APPROVED' | 'REGISTRATION_NOT_FOUND';
