/** How the sandbox kit's own tables come back from the database (PostgreSQL and PGlite alike). */

/** A timestamp column as ISO 8601. */
export const iso = (d: Date | string): string => new Date(d).toISOString();
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

/** A jsonb column: written as text, read back parsed (or as text where the driver leaves it so). */
export const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
