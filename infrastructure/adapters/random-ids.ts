import { createHash, randomFillSync, randomUUID } from 'node:crypto';
import { inject, injectable } from 'inversify';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import { PLATFORM } from '../platform/tokens.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * The operating system's random bytes, drawn 4 KiB at a time and handed out 16 at a time: one call into the CSPRNG
 * for 256 ids instead of one (and a buffer) per id (docs/testing.md, issue 30). Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let taken = pool.length;
function random16(): Buffer {
  if (taken + 16 > pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  taken += 16;
  return pool.subarray(taken - 16, taken);
}

/** `<prefix>_<10 chars of time><16 chars of randomness>`: sortable by creation, unguessable. */
@injectable()
export class RandomIds implements IdsPort {
  constructor(@inject(PLATFORM.Clock) private readonly clock: ClockPort) {}

  id(prefix: string): string {
    let t = this.clock.now().getTime();
    let time = '';
    for (let i = 0; i < 10; i++) {
      time = ALPHABET[t % 32]! + time;
      t = Math.floor(t / 32);
    }
    const bytes = random16();
    let rand = '';
    for (const b of bytes) rand += ALPHABET[b % 32];
    return `${prefix}_${time}${rand}`;
  }

  uuid(): string {
    return randomUUID();
  }

  /** `<prefix>_<26 chars>`: base32 of the SHA-256 of the parts (length-prefixed, so no two part lists collide). */
  derived(prefix: string, ...parts: string[]): string {
    const h = createHash('sha256');
    for (const p of parts) h.update(`${p.length}:${p}`);
    let out = '';
    for (const b of h.digest().subarray(0, 26)) out += ALPHABET[b % 32];
    return `${prefix}_${out}`;
  }
}
