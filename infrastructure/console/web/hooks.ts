import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

export type Loaded<T> = { data: T | null; error: string | null; loading: boolean; reload: () => void };

/** GETs `path` with the session's key whenever it changes, and again on `reload()` (or every `everyMs`). */
export function useApi<T>(path: string | null, o: { everyMs?: number } = {}): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    if (!path) return;
    let live = true;
    setLoading(true);
    api<T>(path)
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [path, tick]);
  useEffect(() => {
    if (!o.everyMs) return;
    const t = setInterval(reload, o.everyMs);
    return () => clearInterval(t);
  }, [o.everyMs, reload]);
  return { data, error, loading, reload };
}
