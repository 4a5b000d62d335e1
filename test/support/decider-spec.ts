import { expect } from 'chai';
import { DomainError, type ErrorCode } from '../../domain/shared/errors.js';
import type { Decider } from '../../domain/shared/types.js';

/** given(past events).when(command).then(new events) | thenThrows(code) (docs/testing.md). */
export const deciderSpec = <C, E, S>(d: Decider<C, E, S>) => ({
  given: (past: E[]) => ({
    when: (cmd: C) => {
      const run = () => d.decide(cmd, past.reduce(d.evolve, d.initialState()));
      return {
        // biome-ignore lint/suspicious/noThenProperty: given / when / then is the decider tests' vocabulary; this object is never awaited
        then: (expected: E[]) => expect(run()).to.deep.equal(expected),
        thenThrows: (code: ErrorCode) => expect(run).to.throw(DomainError).with.property('code', code),
      };
    },
  }),
});
