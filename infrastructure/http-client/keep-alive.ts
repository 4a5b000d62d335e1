import http from 'node:http';
import https from 'node:https';

/**
 * Idle kept-alive sockets are dropped after this long at the latest; sooner when the server announces a shorter
 * `Keep-Alive: timeout=N` (node's agent then keeps a socket N - 1 seconds, but only when this is set).
 */
const IDLE_SOCKET_MS = 30_000;

/** One keep-alive agent per scheme, for clients that POST to customers' endpoints (docs/webhooks.md#connections). */
export const keepAliveAgents = (maxSockets: number) => ({
  'http:': new http.Agent({ keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS }),
  'https:': new https.Agent({ keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS }),
});

/**
 * Whether a request failed only because it was written on a kept-alive socket that the server had just closed
 * as idle: the server never read it, so sending it once more on a new connection is safe (node's documented
 * `reusedSocket` pattern). Any other failure is the endpoint's answer and is reported as it is.
 */
export const closedWhileIdle = (request: http.ClientRequest, err: NodeJS.ErrnoException, answered: boolean): boolean =>
  !answered && request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
