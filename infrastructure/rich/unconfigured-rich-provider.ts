import { RichProviderError, type RichProviderPort } from '../../application/rich/rich-provider.port.js';

const off = async (): Promise<never> => {
  throw new RichProviderError('no rich-messaging provider is configured (RICH_PROVIDER)');
};

/** RICH_PROVIDER=none (the default in live mode): no number is ever a rich line, and any call is refused. */
export class UnconfiguredRichProvider implements RichProviderPort {
  checkCapabilities = off;
  send = off;
  react = off;
  typing = off;
  publishContactCard = off;
  setBackground = off;
  clearBackground = off;
  locations = off;
}
