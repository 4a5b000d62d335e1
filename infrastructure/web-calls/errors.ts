/**
 * Error codes of the web-call edge (docs/calls.md#the-socket). The socket has no domain of its own, so its codes
 * are declared beside its module; they join the shared list the same way a domain's do.
 */
declare module '../../domain/shared/errors.js' {
  interface ErrorCodes {
    /** a plain HTTP request to the web calls' WebSocket path */
    WEBSOCKET_REQUIRED: true;
  }
}
export type WebCallErrorCode = 'WEBSOCKET_REQUIRED';
