/** Error codes of the rich-messaging channel (docs/rich-messaging.md#errors, docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    /** the account (or the number, or the conversation) is not on the rich-messaging channel */
    RICH_CHANNEL_UNAVAILABLE: true;
    /** an image (avatar, chat background) that could not be fetched or is not an allowed image */
    RICH_MEDIA_REJECTED: true;
    /** the rich-messaging provider failed or did not answer in time */
    RICH_PROVIDER_ERROR: true;
    /** no contact shares a location with the account's numbers under this phone number */
    LOCATION_NOT_FOUND: true;
  }
}
export type RichErrorCode = 'RICH_CHANNEL_UNAVAILABLE' | 'RICH_MEDIA_REJECTED' | 'RICH_PROVIDER_ERROR' | 'LOCATION_NOT_FOUND';
