/**
 * How a text body travels as SMS: its encoding and how many segments it takes (docs/messaging-encoding.md).
 *
 * GSM-7 is the GSM 03.38 default alphabet plus its extension table: a basic character takes one septet, an
 * extension character two (the escape and the character). A body with any character outside both tables goes
 * as UCS-2, counted in UTF-16 code units. One segment holds 160 septets (GSM-7) or 70 code units (UCS-2); a
 * longer body is split into segments of 153 septets or 67 code units (the rest of each is the concatenation
 * header), and a split never separates an escape from its character or the two halves of a surrogate pair.
 */

export type Encoding = 'GSM-7' | 'UCS-2';

export type Segments = Readonly<{
  encoding: Encoding;
  /** SMS segments the text takes; 0 for an empty text (docs/messaging-encoding.md, "Empty bodies") */
  segments: number;
  /** Unicode code points of the body, as a person counts them (an emoji is one) */
  characters: number;
  /** septets (GSM-7) or UTF-16 code units (UCS-2) the body takes */
  units: number;
}>;

/** The GSM 03.38 default alphabet, without the escape (0x1B), which is not a character of its own. */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** The default extension table: each of these is sent as escape + character, two septets. */
const GSM_EXTENSION = '\f^{}\\[~]|€';

const basic: ReadonlySet<string> = new Set(GSM_BASIC);
const extension: ReadonlySet<string> = new Set(GSM_EXTENSION);

export const GSM7_SINGLE_SEGMENT_SEPTETS = 160;
export const GSM7_MULTIPART_SEPTETS = 153;
export const UCS2_SINGLE_SEGMENT_UNITS = 70;
export const UCS2_MULTIPART_UNITS = 67;

/** Septets a GSM-7 character takes: 1 (basic), 2 (extension), or null when it is not in GSM-7. */
export const gsmSeptets = (ch: string): 1 | 2 | null => (basic.has(ch) ? 1 : extension.has(ch) ? 2 : null);

/** GSM-7 when every character is in the default alphabet or its extension table; otherwise UCS-2. */
export function encodingOf(body: string): Encoding {
  for (const ch of body) if (gsmSeptets(ch) === null) return 'UCS-2';
  return 'GSM-7';
}

/**
 * Counts segments by filling them in order with indivisible pieces (a GSM-7 character of 1 or 2 septets, a
 * UTF-16 code point of 1 or 2 units): a piece that does not fit in what is left of a segment starts the next one.
 */
function pack(pieces: readonly number[], single: number, multipart: number): { segments: number; units: number } {
  const units = pieces.reduce((a, b) => a + b, 0);
  if (units === 0) return { segments: 0, units };
  if (units <= single) return { segments: 1, units };
  let segments = 1;
  let used = 0;
  for (const p of pieces) {
    if (used + p > multipart) {
      segments += 1;
      used = 0;
    }
    used += p;
  }
  return { segments, units };
}

/** The encoding of `body` and the segments, code points and septets or code units it takes. */
export function segmentsOf(body: string): Segments {
  const codePoints = [...body];
  const encoding = encodingOf(body);
  const { segments, units } =
    encoding === 'GSM-7'
      ? pack(
          codePoints.map((ch) => gsmSeptets(ch) ?? 1),
          GSM7_SINGLE_SEGMENT_SEPTETS,
          GSM7_MULTIPART_SEPTETS,
        )
      : pack(
          codePoints.map((ch) => ch.length),
          UCS2_SINGLE_SEGMENT_UNITS,
          UCS2_MULTIPART_UNITS,
        );
  return { encoding, segments, characters: codePoints.length, units };
}
