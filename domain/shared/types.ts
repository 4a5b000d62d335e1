/** Core building blocks of the pure domain model (docs/architecture.md#layers). */
export type Event<T extends string = string, D extends object = Record<string, unknown>> = Readonly<{
  type: T;
  data: Readonly<D>;
}>;

/** Every command carries the time it happens at and the account it acts for: deciders never read a clock. */
export type CommandMetadata = Readonly<{ now: string; accountId: string }>;

export type Command<T extends string = string, D extends object = Record<string, unknown>> = Readonly<{
  type: T;
  data: Readonly<D>;
  metadata: CommandMetadata;
}>;

export type Decider<C, E, S> = Readonly<{
  initialState: () => S;
  /** Pure: returns the new events, `[]` for an idempotent no-op, or throws a DomainError. */
  decide: (command: C, state: S) => E[];
  /** Total: never throws, never validates. */
  evolve: (state: S, event: E) => S;
  /**
   * For an aggregate whose stream grows without bound: how its state is kept as a snapshot (JSON-safe), so that
   * loading it folds only the events after the snapshot (docs/event-store.md#snapshots). A change of the state's
   * shape bumps `version`; snapshots of another version are ignored.
   */
  snapshot?: Readonly<{ version: number; encode: (state: S) => unknown; decode: (json: unknown) => S }>;
}>;

export const assertNever = (x: never): never => {
  throw new Error(`unhandled ${JSON.stringify(x)}`);
};
