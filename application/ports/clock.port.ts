/** The only source of time for application code. Tests use a movable clock. */
export interface ClockPort {
  now(): Date;
}
