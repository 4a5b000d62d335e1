import { E164 } from '../agents/agent.schemas.js';
import { z } from '../http/openapi.js';
import { offsetQuery } from '../http/pagination.js';

/** Limits of a contact's fields (docs/contacts.md#fields). */
export const CONTACT_NAME_MAX = 100;
export const CONTACT_EMAIL_MAX = 254;
export const CONTACT_NOTES_MAX = 5000;

/**
 * A phone number as people write it, normalized to E.164 (docs/contacts.md#fields): spaces, dashes, dots and
 * parentheses are dropped; ten digits are a North American number (+1 added), eleven digits starting with 1 get
 * the `+`. Anything else must already be E.164.
 */
export const normalizePhone = (v: unknown): unknown => {
  if (typeof v !== 'string') return v;
  const s = v.trim().replace(/[\s().-]/g, '');
  if (/^\d{10}$/.test(s)) return `+1${s}`;
  if (/^1\d{10}$/.test(s)) return `+${s}`;
  return s;
};
const ContactPhone = z.preprocess(normalizePhone, E164);

const Name = z.string().trim().min(1).max(CONTACT_NAME_MAX);
/** Optional text: null or "" leaves it empty (clears it on PATCH). */
const clearable = <T extends z.ZodType<string | null>>(t: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : v), t.nullable());
const Email = clearable(z.email('must be an e-mail address').max(CONTACT_EMAIL_MAX));
const Notes = clearable(z.string().max(CONTACT_NOTES_MAX));

export const CreateContactRequest = z
  .object({
    phoneNumber: ContactPhone.openapi({ description: 'E.164, or a North American number with 10 or 11 digits', example: '+14155550123' }),
    name: Name,
    email: Email.optional().transform((v) => v ?? null),
    notes: Notes.optional()
      .transform((v) => v ?? null)
      .openapi({ description: `at most ${CONTACT_NOTES_MAX} characters` }),
  })
  .openapi('CreateContactRequest');

/** Partial: a field left out, or `null` on `phoneNumber` or `name`, stays as it is; `null` or "" clears `email` and `notes`. */
export const UpdateContactRequest = z
  .object({
    phoneNumber: ContactPhone.nullish().transform((v) => v ?? undefined),
    name: Name.nullish().transform((v) => v ?? undefined),
    email: Email.optional(),
    notes: Notes.optional(),
  })
  .transform(
    (b) =>
      Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) as Partial<{
        phoneNumber: string;
        name: string;
        email: string | null;
        notes: string | null;
      }>,
  )
  .openapi('UpdateContactRequest');

export const ContactResponse = z
  .object({
    id: z.string(),
    phoneNumber: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    notes: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('ContactResponse');

export const ContactListResponse = z
  .object({ data: z.array(ContactResponse), hasMore: z.boolean(), total: z.number().int() })
  .openapi('ContactListResponse');

export const ContactListQuery = offsetQuery({ defaultLimit: 50 }).extend({
  search: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({ description: 'keeps the contacts whose name or phone number contains this text (ignoring case)' }),
});

export const ContactIdParams = z.object({ contact_id: z.string().min(1).max(64) });
