import { performance } from 'node:perf_hooks';
import { encodeWav } from '../speech/wav.js';

/** G.711's rate: what both legs of a bridge carry */
const RATE = 8000;
/** the mix is kept in blocks of one second, allocated as the call goes on */
const BLOCK = RATE;

/** Where one side's next frame goes: after the last one, unless the line went quiet (no packets) for longer. */
class Cursor {
  private next = 0;

  place(length: number, nowSample: number): number {
    // frames come as packets arrive (lost ones as silence): a frame follows the last one, unless no packets came for
    // longer than a frame, when it goes where the clock says, so both sides stay in step
    const at = nowSample - this.next > length ? nowSample : this.next;
    this.next = at + length;
    return at;
  }

  get end(): number {
    return this.next;
  }
}

/**
 * The audio of a bridged call (docs/sip.md#recording-bridged-calls): both directions as the platform relays them,
 * mixed into one mono 8 kHz WAV, from the moment the far end answered. Each side's 20 ms frames are placed by the
 * packet clock (a frame follows the one before it; after a gap with no packets it is placed at the time it came), so
 * the two sides stay aligned within a frame. Frames are mixed as they come, into one-second blocks (a sum beyond 16
 * bits clipped), so that ending an hour-long call copies its blocks and mixes nothing: the packet clock of the
 * process's other calls is not held up.
 */
export class BridgeRecorder {
  private readonly start: number;
  private readonly blocks: Int16Array[] = [];
  private readonly sides = { caller: new Cursor(), far: new Cursor() };

  /** `clock`: milliseconds, monotonic (the packet clock's) */
  constructor(private readonly clock: () => number = () => performance.now()) {
    this.start = clock();
  }

  caller(samples: Int16Array): void {
    this.mix(samples, this.sides.caller.place(samples.length, this.now()));
  }

  far(samples: Int16Array): void {
    this.mix(samples, this.sides.far.place(samples.length, this.now()));
  }

  /** The WAV so far, and its length; null when no audio came from either side. */
  wav(): { wav: Uint8Array; durationMs: number } | null {
    const length = Math.max(this.sides.caller.end, this.sides.far.end);
    if (length === 0) return null;
    const samples = new Int16Array(length);
    this.blocks.forEach((block, i) => {
      if (block) samples.set(block.subarray(0, Math.min(BLOCK, length - i * BLOCK)), i * BLOCK);
    });
    return { wav: encodeWav({ samples, sampleRate: RATE }), durationMs: Math.round((length * 1000) / RATE) };
  }

  private mix(samples: Int16Array, at: number): void {
    for (let i = 0; i < samples.length; i++) {
      const n = at + i;
      const b = Math.floor(n / BLOCK);
      this.blocks[b] ??= new Int16Array(BLOCK);
      const block = this.blocks[b]!;
      block[n % BLOCK] = Math.max(-32768, Math.min(32767, block[n % BLOCK]! + samples[i]!));
    }
  }

  private now(): number {
    return Math.round(((this.clock() - this.start) * RATE) / 1000);
  }
}
