/**
 * Whether an error means "the database (or event store) is unreachable right now" rather than "this request
 * is wrong": refused or dropped connections, a server shutting down or terminating our backend, a pool that
 * cannot connect in time. Such errors answer 503 SERVICE_UNAVAILABLE and background work retries them
 * (docs/security.md, "The database going away").
 */
const NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTCONN',
]);
/**
 * SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, terminated, cannot connect now), 53300 (too
 * many connections), 3D000 (the database is gone, e.g. dropped)
 */
const SQLSTATE = /^(08...|57P0[123]|53300|3D000)$/;
const MESSAGES = [
  /Connection terminated/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Client was closed/i,
  /Cannot use a pool after calling end/i,
  /terminating connection/i,
  /the database system is (shutting down|starting up)/i,
  /is not currently accepting connections/i,
];

export function isConnectionError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; type?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NODE_CODES.has(e.code) || SQLSTATE.test(e.code))) return true;
  // @eventstore/db-client: the node is down or the channel dropped
  if (e.type === 'unavailable' || e.name === 'UnavailableError') return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isConnectionError(x, depth + 1))) return true; // AggregateError (dual-stack connect)
  return isConnectionError(e.cause, depth + 1);
}
