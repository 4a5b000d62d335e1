import type { MailerPort } from '../../application/signup/mailer.port.js';
import type { NumberProvisioningPort } from '../../application/signup/number-provisioning.port.js';
import type { OtpPort } from '../../application/signup/otp.port.js';
import type { SignUpService } from '../../application/signup/signup-service.js';
import type { SignUpQueries } from '../../projections/signup/signup.queries.js';
import { token } from '../capabilities/token.js';

/** The sign-up capability's tokens (its module binds them). */
export const SIGNUP = {
  Mailer: token<MailerPort>('MailerPort'),
  Otp: token<OtpPort>('OtpPort'),
  Queries: token<SignUpQueries>('SignUpQueries'),
  Service: token<SignUpService>('SignUpService'),
  /** what sign-up needs from the numbers capability: one number, idempotent by id */
  NumberProvisioning: token<NumberProvisioningPort>('NumberProvisioningPort'),
} as const;
