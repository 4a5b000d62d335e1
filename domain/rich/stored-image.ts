import type { ImageType } from './image-type.js';

/** An image fetched once and kept (docs/rich-messaging.md#images): where it is stored, what it is, and its digest. */
export type StoredImage = Readonly<{ mediaId: string; contentType: ImageType; bytes: number; sha256: string }>;
