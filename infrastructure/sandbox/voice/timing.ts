/** How speech and tones take time in the sandbox (docs/sandbox.md#speech-takes-time), and timers that end together. */

export const E164 = /^\+[1-9]\d{1,14}$/;
export const DIGITS = /^[0-9*#]+$/;

export const wordsOf = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);
/** Speech takes words × 60000 / words-per-minute milliseconds. */
export const msPerWordAt = (wordsPerMinute: number): number => 60_000 / wordsPerMinute;
/** A keypad tone and its gap: a word's time, at most 200 ms. */
export const toneMsAt = (wordsPerMinute: number): number => Math.min(200, msPerWordAt(wordsPerMinute));
/** A recogniser is less sure of very short utterances. */
export const confidenceOf = (words: number): number => (words <= 2 ? 0.7 : 0.92);

/** Every timer of one owner, so that all of them can be dropped at once. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(ms: number, f: () => void): NodeJS.Timeout {
    const t = setTimeout(
      () => {
        this.pending.delete(t);
        f();
      },
      Math.max(0, ms),
    );
    this.pending.add(t);
    return t;
  }

  cancel(t: NodeJS.Timeout | null): void {
    if (!t) return;
    clearTimeout(t);
    this.pending.delete(t);
  }

  clear(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}

/** Waits on timers of an owner that may end first: every wait still pending then rejects with the owner's reason. */
export class Waits {
  private readonly waiting = new Set<(err: Error) => void>();

  constructor(private readonly timers: Timers) {}

  for(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.add(reject);
      this.timers.after(ms, () => {
        this.waiting.delete(reject);
        resolve();
      });
    });
  }

  rejectAll(err: Error): void {
    for (const reject of this.waiting) reject(err);
    this.waiting.clear();
  }
}
