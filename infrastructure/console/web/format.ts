/** Display helpers shared by the pages. */
export const time = (iso: string | null | undefined): string => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '–');
export const money = (micros: number): string => `$${(micros / 1_000_000).toFixed(2)}`;
export const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : `${Math.round(v)} ms`);
export const pct = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : `${v}%`);

/** The CSS class of a status badge: the colours say good (delivered, success, completed), bad, or under way. */
export function tone(status: string | null | undefined): string {
  switch (status) {
    case 'delivered':
    case 'read':
    case 'success':
    case 'completed':
    case 'received':
    case 'active':
    case 'bound':
    case 'recovered':
      return 'good';
    case 'failed':
    case 'disabled':
    case 'disable_warning':
      return 'bad';
    case 'failing':
      return 'warn';
    case 'not joined':
    case 'released':
    case 'unbound':
      return 'idle';
    default:
      return 'busy';
  }
}
