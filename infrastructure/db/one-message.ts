import type pg from 'pg';

/** The part of node-postgres's connection a batch writes to (its own queries write through the same method). */
type Wire = { _send(message: Buffer): void };

/**
 * One message (a batch of statements, or a connection's `Close`s) as a query of node-postgres (its `Submittable`
 * interface): written at once and answered once. node-postgres hands it the backend's messages until the one
 * `ReadyForQuery`; the first error ends it (node-postgres then stops handing it messages, and the connection takes its
 * next query after that `ReadyForQuery`).
 */
export class OneMessage implements pg.Submittable {
  private ended = false;
  constructor(
    private readonly message: Buffer,
    private readonly end: (err: unknown) => void,
  ) {}
  submit(connection: unknown): void {
    (connection as Wire)._send(this.message);
  }
  private finish(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.end(err);
  }
  handleError(err: unknown): void {
    this.finish(err ?? new Error('the pipelined batch failed'));
  }
  handleReadyForQuery(): void {
    this.finish(null);
  }
  // rows and tags of the statements are not needed: a batch answers nothing
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: { sendCopyFail(msg: string): void }): void {
    connection.sendCopyFail('a pipelined batch copies nothing');
  }
  handleCopyData(): void {}
}
