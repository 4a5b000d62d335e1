/** Error codes of contacts (docs/errors.md, docs/contacts.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    CONTACT_NOT_FOUND: true;
    CONTACT_EXISTS: true;
  }
}
export type ContactErrorCode = 'CONTACT_NOT_FOUND' | 'CONTACT_EXISTS';
