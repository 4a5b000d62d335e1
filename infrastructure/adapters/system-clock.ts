import { injectable } from 'inversify';
import type { ClockPort } from '../../application/ports/clock.port.js';

@injectable()
export class SystemClock implements ClockPort {
  now(): Date {
    return new Date();
  }
}
