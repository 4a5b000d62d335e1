import type { SignUpService } from '../../application/signup/signup-service.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';

const SignUpRequest = z
  .object({
    human_email: z.email().max(254),
    agent_name: z.string().trim().min(1).max(100).nullish(),
  })
  .openapi('AgentSignUpRequest');

const VerifyRequest = z
  .object({
    verification_id: z.string().min(1).max(64),
    otp_code: z.string().regex(/^\d{6}$/, 'must be the 6-digit code from the e-mail'),
    source: z.string().max(100).nullish(),
  })
  .openapi('AgentVerifyRequest');

const VerifyResponse = z
  .object({
    api_key: z.string().nullable().openapi({ description: 'shown once: store it now' }),
    account_id: z.string(),
    user_id: z.string(),
    project_id: z.string(),
    agent_id: z.string(),
    number_id: z.string(),
    phone_number: z.string().nullable(),
    message: z.string(),
  })
  .openapi('AgentVerifyResponse');

/** Self-service sign-up (docs/accounts.md#sign-up): no authentication; throttled per e-mail address and per client address. */
export function signUpRoutes(api: Api, d: { signUp: SignUpService }): void {
  api.route({
    method: 'post',
    path: '/v0/agent/sign-up',
    tag: 'sign-up',
    auth: false,
    errors: [429],
    summary: 'Send a 6-digit code to the e-mail address; nothing is provisioned until verify',
    body: SignUpRequest,
    response: z.object({ verification_id: z.string(), expires_in_seconds: z.number().int(), message: z.string() }),
    handler: ({ body, req, ctx }) =>
      d.signUp.request(ctx, { email: body.human_email, agentName: body.agent_name ?? null, clientAddress: req.ip ?? null }),
  });
  api.route({
    method: 'post',
    path: '/v0/agent/verify',
    tag: 'sign-up',
    auth: false,
    errors: [400, 404, 409, 429, 502],
    summary: 'Check the code and create user, project, account, starter hosted agent, phone number, first charge and API key',
    body: VerifyRequest,
    response: VerifyResponse,
    handler: ({ body, ctx }) =>
      d.signUp.verify(ctx, { verificationId: body.verification_id, code: body.otp_code, source: body.source ?? null }),
  });
}
