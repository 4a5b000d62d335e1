/**
 * What is prepared, embedded and on a server alike (docs/event-store.md#prepared-statements): a statement with
 * parameters, whose text is at most `PREPARED_TEXT_MAX` characters and does not start with `PLANNED_EACH_RUN`.
 */

/** the longest text prepared */
export const PREPARED_TEXT_MAX = 8_000;
/**
 * A statement whose text starts with this comment is planned at each run, never prepared
 * (docs/event-store.md#prepared-statements): for a statement over a table that grows fast, whose best plan depends
 * on how many rows wait, a generic plan settled on while the table was small stays until the table is next analyzed.
 */
export const PLANNED_EACH_RUN = '/* planned at each run */';

export const preparable = (sql: string, params: readonly unknown[]): boolean =>
  params.length > 0 && sql.length <= PREPARED_TEXT_MAX && !sql.startsWith(PLANNED_EACH_RUN);

/**
 * A prepared statement the session no longer has as the text was planned: its table changed shape ("cached plan
 * must not change result type") or it is gone. Prepared afresh, it runs.
 */
export const stalePrepared = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string };
  return e.code === '26000' || (e.code === '0A000' && /cached plan/.test(e.message ?? ''));
};
