/** A typed key into the container: the type it resolves to travels with it. */
export type Token<T> = symbol & { readonly __resolves?: T };
export const token = <T>(name: string): Token<T> => Symbol.for(name) as Token<T>;

/** Resolves a token to its (singleton) value: typed by the token, so a wrong type fails the type check. */
export type Resolve = <T>(t: Token<T>) => T;
