import pgUtils from 'pg/lib/utils.js';
import { serialize } from 'pg-protocol';

/**
 * Messages of PostgreSQL's wire protocol, written with node-postgres's serializer (pg-protocol), shared by the PGlite
 * driver and the server's pipelined batches (docs/event-store.md#pipelined-batches).
 */

/**
 * The parameters as node-postgres sends them to a server: text, their types left to the server. pg-protocol binds a
 * statement's parameters in about a tenth of the time PGlite's own copy of it takes.
 */
export const bindOf = (statement: string, params: readonly unknown[]) =>
  serialize.bind({ statement, values: params.map((v) => pgUtils.prepareValue(v)) as never });
/** the parts of every statement's message that never change */
export const DESCRIBE_EXECUTE = Buffer.concat([serialize.describe({ type: 'P' }), serialize.execute({})]);
export const SYNC = serialize.sync();
