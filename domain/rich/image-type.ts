/**
 * What an image is, told by its first bytes, never by its name or a declared type (docs/rich-messaging.md#images):
 * JPEG, PNG, GIF, WebP and HEIC/HEIF are the images the rich channel carries; anything else is refused.
 */
export type ImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp' | 'image/heic';

/** The most an avatar or a chat background may weigh: 10 MB. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** HEIF brands of still images (HEIC and its variants, and the generic `mif1`/`msf1`). */
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1']);

export function imageTypeOf(b: Uint8Array): ImageType | null {
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp';
  // ISO base media file: a box of type `ftyp` whose major brand is a HEIF one
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp' && HEIF_BRANDS.has(ascii(b, 8, 12))) return 'image/heic';
  return null;
}
