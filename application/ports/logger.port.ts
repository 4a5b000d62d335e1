/** The slice of a structured logger the inner layers use (pino satisfies it). */
export interface LoggerPort {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
