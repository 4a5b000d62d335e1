/** Error codes of accounts, keys and billing (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    ACCOUNT_NOT_FOUND: true;
    API_KEY_NOT_FOUND: true;
    INSUFFICIENT_BALANCE: true;
    /** the account holds as many number slots as its limit allows */
    NUMBER_LIMIT_REACHED: true;
  }
}
export type AccountErrorCode = 'ACCOUNT_NOT_FOUND' | 'API_KEY_NOT_FOUND' | 'INSUFFICIENT_BALANCE' | 'NUMBER_LIMIT_REACHED';
