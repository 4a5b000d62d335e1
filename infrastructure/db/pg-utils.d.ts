/** node-postgres's value preparation (how it sends a parameter to a server), which its own types do not declare. */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
