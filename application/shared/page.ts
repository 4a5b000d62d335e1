/** An offset page request and its answer, shared by every list query. */
export type Page = Readonly<{ limit: number; offset: number }>;
export type PageOf<T> = Readonly<{ data: T[]; total: number }>;
