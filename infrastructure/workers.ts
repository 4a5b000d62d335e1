/** Something that runs in the background of a worker process: a reactor runner, a scheduler, a delivery worker. */
export interface BackgroundWorker {
  readonly name: string;
  start(): Promise<void>;
  /** finish the item in hand, then stop */
  stop(): Promise<void>;
}
