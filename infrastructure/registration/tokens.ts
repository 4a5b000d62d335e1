import type { RegistrationQueries } from '../../application/registration/registration-queries.port.js';
import type { RegistrationStatusPort } from '../../application/registration/registration-status.port.js';
import type { Registrations } from '../../application/registration/registrations.js';
import { token } from '../capabilities/token.js';

/** The registration capability's tokens (its module binds them). */
export const REGISTRATION = {
  Registrations: token<Registrations>('Registrations'),
  /** what messaging asks before a US send: read from the event store, never stale */
  Status: token<RegistrationStatusPort>('RegistrationStatusPort'),
  Queries: token<RegistrationQueries>('RegistrationQueries'),
} as const;
