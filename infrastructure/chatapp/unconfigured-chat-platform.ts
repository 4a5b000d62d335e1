import { ChatPlatformError, type ChatPlatformPort } from '../../application/chatapp/chat-platform.port.js';

const refuse = (): never => {
  throw new ChatPlatformError(
    0,
    'no chat platform is configured on this server: set CHATAPP_PROVIDER=cloud, CHATAPP_API_BASE_URL and CHATAPP_MESSAGING_PRODUCT',
  );
};

/** Live mode without the cloud API's configuration: every call is refused, saying what to set (docs/configuration.md). */
export class UnconfiguredChatPlatform implements ChatPlatformPort {
  businessAccount = async () => refuse();
  phoneNumbers = async () => refuse();
  registerNumber = async () => refuse();
  submitTemplate = async () => refuse();
  send = async () => refuse();
}
