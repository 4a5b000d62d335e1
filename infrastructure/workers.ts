import type { Container } from 'inversify';
import { numberWorkerModules } from './numbers.module.js';
import { webhookWorkerModule } from './webhooks/module.js';
import { signUpWorkerModule } from './signup.module.js';

/** Something that runs in the background of a worker process: a reactor, a scheduler, a delivery worker. */
export interface BackgroundWorker {
  readonly name: string;
  start(): Promise<void>;
  /** finish the item in hand, then stop */
  stop(): Promise<void>;
}

export type WorkerModule = (c: Container) => BackgroundWorker;

/**
 * Started after the projectors in every process whose ROLE is `worker` or `all`, stopped before them on
 * shutdown. One line per capability.
 */
export const workerModules: readonly WorkerModule[] = [
  webhookWorkerModule,
  ...numberWorkerModules,
  signUpWorkerModule,
];
