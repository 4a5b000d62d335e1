/**
 * The receiving side's jitter buffer (docs/sip.md#media): packets are put back in sequence order, a late one within
 * the buffer's depth still finds its place, a duplicate or one that comes after its turn has been played is
 * dropped, and a packet still missing once `depth` later ones have arrived is lost: its place is given as `null`
 * (the caller fills it with silence). It also keeps the receive statistics of RFC 3550: packets, loss and the
 * interarrival jitter (§6.4.1, A.8).
 */
export type JitterStats = Readonly<{
  /** packets received (duplicates and late ones included) */
  packets: number;
  /** packets never received in time */
  lost: number;
  /** packets dropped: duplicates, or after their place was played */
  late: number;
  /** the interarrival jitter estimate, in milliseconds */
  jitterMs: number;
}>;

type Held<T> = { ext: number; item: T };

/**
 * A jump forward of more than this many packets is no loss but a new start (the far end's stream restarted, or a
 * packet lies about its sequence number): the buffer starts again at that packet instead of playing thousands of
 * silent frames (RFC 3550 A.1 treats such jumps alike).
 */
export const RESYNC_PACKETS = 50;

export class JitterBuffer<T> {
  /** the extended sequence number of the next packet to release; null before the first */
  private next: number | null = null;
  private highest = -1;
  private readonly held = new Map<number, Held<T>>();
  private packets = 0;
  private lost = 0;
  private late = 0;
  private jitter = 0;
  private lastTransit: number | null = null;

  constructor(
    private readonly o: Readonly<{
      /** packets held back waiting for a missing one */
      depth: number;
      /** timestamp units per millisecond (8 for 8 kHz audio) */
      unitsPerMs: number;
    }>,
  ) {}

  /**
   * One arriving packet: its 16-bit sequence number, RTP timestamp and arrival time (ms). Answers the items now
   * due, in order; `null` for each lost one.
   */
  push(sequence: number, timestamp: number, arrivalMs: number, item: T): (T | null)[] {
    this.packets++;
    const ext = this.extend(sequence);
    if (this.next !== null && ext - this.next > RESYNC_PACKETS) {
      // a new start: what was held is played, then the sequence goes on from this packet
      const held = this.flush();
      this.restart();
      this.packets--; // counted again as the first of the new start
      return [...held, ...this.push(sequence, timestamp, arrivalMs, item)];
    }
    this.measure(timestamp, arrivalMs);
    if (this.next === null) this.next = ext;
    if (ext < this.next || this.held.has(ext)) {
      this.late++;
      return [];
    }
    this.held.set(ext, { ext, item });
    this.highest = Math.max(this.highest, ext);
    return this.release();
  }

  /** Forgets where the sequence is (a new source): the next packet starts it again. The statistics go on. */
  restart(): void {
    this.next = null;
    this.highest = -1;
    this.held.clear();
    this.lastTransit = null;
  }

  /** The items now due, in order; `null` for each given up on. */
  private release(): (T | null)[] {
    const out: (T | null)[] = [];
    if (this.next === null) return out;
    for (;;) {
      const h = this.held.get(this.next);
      if (h) {
        this.held.delete(this.next);
        out.push(h.item);
        this.next++;
        continue;
      }
      // a gap: given up on once `depth` packets after it are waiting
      if (this.held.size < this.o.depth || this.highest < this.next) break;
      out.push(null);
      this.lost++;
      this.next++;
    }
    return out;
  }

  /** What is still held, in order (the call ended): gaps between them count as lost. */
  flush(): (T | null)[] {
    const out: (T | null)[] = [];
    if (this.next === null) return out;
    while (this.held.size > 0) {
      const h = this.held.get(this.next);
      if (h) {
        this.held.delete(this.next);
        out.push(h.item);
      } else {
        out.push(null);
        this.lost++;
      }
      this.next++;
    }
    return out;
  }

  get stats(): JitterStats {
    return { packets: this.packets, lost: this.lost, late: this.late, jitterMs: Math.round((this.jitter / this.o.unitsPerMs) * 100) / 100 };
  }

  /** The sequence number extended past 16 bits, as the one nearest the highest seen (RFC 3550 A.1). */
  private extend(sequence: number): number {
    if (this.highest < 0) return sequence;
    const cycle = this.highest - (this.highest & 0xffff);
    const candidates = [cycle - 0x10000 + sequence, cycle + sequence, cycle + 0x10000 + sequence];
    let best = candidates[1]!;
    for (const c of candidates) if (c >= 0 && Math.abs(c - this.highest) < Math.abs(best - this.highest)) best = c;
    return best;
  }

  private measure(timestamp: number, arrivalMs: number): void {
    const transit = arrivalMs * this.o.unitsPerMs - timestamp;
    if (this.lastTransit !== null) {
      let d = transit - this.lastTransit;
      // the timestamp wrapped
      if (Math.abs(d) > 0x80000000) d = d > 0 ? d - 0x100000000 : d + 0x100000000;
      this.jitter += (Math.abs(d) - this.jitter) / 16;
    }
    this.lastTransit = transit;
  }
}
