/** The only source of time for application code. Tests use a movable clock. */
export interface ClockPort {
  now(): Date;
}
export const isoNow = (c: ClockPort): string => c.now().toISOString();
