import {
  CAMPAIGN_INCLUDES,
  CONTACT_TITLES,
  ORGANIZATION_TYPES,
  REGISTRATION_TYPES,
  type RegistrationDetails,
  USE_CASES,
  VOLUMES,
} from '../../domain/registration/registration.decider.js';
import { z } from '../http/openapi.js';

const text = (max: number) => z.string().trim().min(1).max(max);
const optionalText = (max: number) =>
  text(max)
    .nullish()
    .transform((v) => v ?? null);
const isUrl = (v: string, schemes: readonly string[]) => {
  try {
    const u = new URL(v);
    return schemes.includes(u.protocol) && u.hostname.length > 0;
  } catch {
    return false;
  }
};
const url = (schemes: readonly string[], message: string) =>
  z
    .string()
    .trim()
    .max(2048)
    .refine((v) => isUrl(v, schemes), message);
const webUrl = () => url(['http:', 'https:'], 'must be an http(s) URL');
const optionalWebUrl = () =>
  webUrl()
    .nullish()
    .transform((v) => v ?? null);

/** The fields standard_brand registrations must give (docs/registration.md#validation). */
const STANDARD_BRAND_REQUIRED = [
  'business_name',
  'organization_type',
  'contact_title',
  'ein',
  'privacy_policy_url',
  'terms_of_service_url',
] as const;

/** POST /v1/register: the wire names of the public API, validated in full (docs/registration.md#validation). */
export const RegistrationRequest = z
  .object({
    registration_type: z.enum(REGISTRATION_TYPES),
    first_name: text(100),
    last_name: text(100),
    email: z.email('must be an e-mail address').max(254),
    phone_number: z.string().regex(/^\+[1-9]\d{7,14}$/, 'must be an E.164 phone number such as +15551234567'),
    business_name: optionalText(255).openapi({ description: 'Legal/registered business name. Required for standard_brand.' }),
    brand_name: optionalText(255).openapi({ description: 'Public-facing brand name if different from business_name.' }),
    organization_type: z
      .enum(ORGANIZATION_TYPES)
      .nullish()
      .transform((v) => v ?? null)
      .openapi({ description: 'Required for standard_brand.' }),
    contact_title: z
      .enum(CONTACT_TITLES)
      .nullish()
      .transform((v) => v ?? null)
      .openapi({ description: 'Your role. Required for standard_brand.' }),
    contact_title_other: optionalText(100).openapi({ description: "Custom title; required when contact_title is 'other'." }),
    ein: z
      .string()
      .trim()
      .regex(/^\d{2}-?\d{7}$/, 'must be a nine-digit EIN such as 12-3456789')
      .nullish()
      .transform((v) => v ?? null)
      .openapi({ description: 'EIN / Tax ID. Required for standard_brand.' }),
    website_url: optionalWebUrl(),
    industry: optionalText(100).openapi({ description: 'e.g. technology, real_estate, retail, healthcare' }),
    business_regions: z.array(text(64)).min(1).max(10).default(['usa_and_canada']),
    street_address: text(255),
    street_address_2: optionalText(255),
    city: text(100),
    state: text(100),
    zip_code: text(20),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
      .transform((v) => v.toUpperCase())
      .default('US'),
    planned_numbers: z.number().int().min(1).max(10_000).default(1),
    description: z
      .string()
      .trim()
      .min(40)
      .max(4096)
      .openapi({ description: 'What your business does, who you message, and what you send. Min 40 chars.' }),
    use_cases: z.array(z.enum(USE_CASES)).min(1).max(5).openapi({ description: '1-5 specific use cases for your SMS campaign.' }),
    volume: z.enum(VOLUMES).default('low'),
    message_samples: z
      .array(z.string().trim().min(20).max(1024))
      .min(2)
      .max(5)
      .openapi({ description: '2-5 example messages, 20-1024 characters each, each naming your brand.' }),
    consent_flow: z.string().trim().min(40).max(4096).openapi({ description: 'How users opt in to receive messages. Min 40 chars.' }),
    privacy_policy_url: optionalWebUrl().openapi({ description: 'Required for standard_brand.' }),
    terms_of_service_url: optionalWebUrl().openapi({ description: 'Required for standard_brand.' }),
    opt_in_image_url: url(['https:'], 'must be a public https URL').openapi({
      description: 'Publicly accessible HTTPS URL of a screenshot of your opt-in flow (PNG, JPG, WEBP or GIF, max 2MB)',
    }),
    includes: z.array(z.enum(CAMPAIGN_INCLUDES)).max(CAMPAIGN_INCLUDES.length).default([]),
    link_sample: optionalWebUrl().openapi({ description: "Example URL; required when includes has 'links'." }),
    create_sub_account: z.boolean().default(true).openapi({
      description: 'Open a dedicated sub-account for this registration (the default); false registers the acting account.',
    }),
  })
  .superRefine((r, ctx) => {
    const missing = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message, input: undefined });
    if (r.registration_type === 'standard_brand')
      for (const f of STANDARD_BRAND_REQUIRED) if (r[f] === null) missing(f, 'is required for standard_brand registrations');
    if (r.contact_title === 'other' && r.contact_title_other === null)
      missing('contact_title_other', "is required when contact_title is 'other'");
    if (r.includes.includes('links') && r.link_sample === null) missing('link_sample', "is required when includes has 'links'");
    if (new Set(r.use_cases).size !== r.use_cases.length)
      ctx.addIssue({ code: 'custom', path: ['use_cases'], message: 'must not repeat a use case', input: r.use_cases });
    const brand = r.brand_name ?? r.business_name;
    if (brand)
      r.message_samples.forEach((m, i) => {
        if (!m.toLowerCase().includes(brand.toLowerCase()))
          ctx.addIssue({ code: 'custom', path: ['message_samples', i], message: `must include the brand name "${brand}"`, input: m });
      });
  })
  .openapi('RegistrationRequest');

export type RegistrationRequest = z.infer<typeof RegistrationRequest>;

export const toDetails = (r: RegistrationRequest): RegistrationDetails => ({
  registrationType: r.registration_type,
  firstName: r.first_name,
  lastName: r.last_name,
  email: r.email,
  phoneNumber: r.phone_number,
  businessName: r.business_name,
  brandName: r.brand_name,
  organizationType: r.organization_type,
  contactTitle: r.contact_title,
  contactTitleOther: r.contact_title_other,
  ein: r.ein,
  websiteUrl: r.website_url,
  industry: r.industry,
  businessRegions: r.business_regions,
  streetAddress: r.street_address,
  streetAddress2: r.street_address_2,
  city: r.city,
  state: r.state,
  zipCode: r.zip_code,
  country: r.country,
  plannedNumbers: r.planned_numbers,
  description: r.description,
  useCases: r.use_cases,
  volume: r.volume,
  messageSamples: r.message_samples,
  consentFlow: r.consent_flow,
  privacyPolicyUrl: r.privacy_policy_url,
  termsOfServiceUrl: r.terms_of_service_url,
  optInImageUrl: r.opt_in_image_url,
  includes: r.includes,
  linkSample: r.link_sample,
});

export const RegistrationResponse = z
  .object({
    ok: z.boolean(),
    message: z.string(),
    campaign_status: z.string().openapi({ description: '`pending`, or `approved` when the request repeats an approved registration' }),
    sub_account_id: z
      .string()
      .nullable()
      .openapi({ description: 'the sub-account registered, opened for it unless the request acted as one' }),
    fee_cents: z
      .number()
      .int()
      .openapi({ description: 'what this request charged: 2500, or 0 when it repeated a registration already paid for' }),
  })
  .openapi('RegistrationResponse');

export const CampaignStatusResponse = z
  .object({
    campaign_status: z.string().openapi({ description: '`none`, `pending`, `approved` or `rejected`' }),
    message: z.string(),
    stage: z.string().nullable().openapi({ description: '`carrier_review`, `approved`, `rejected`; null with `none`' }),
  })
  .openapi('CampaignStatusResponse');
