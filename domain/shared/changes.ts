/** Of a partial update, only the fields whose value really changes (`undefined` = not sent). */
export function changedFields<T extends object>(current: T, changes: Partial<T>): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) continue;
    if (JSON.stringify((current as Record<string, unknown>)[k]) !== JSON.stringify(v)) out[k] = v;
  }
  return out as Partial<T>;
}
