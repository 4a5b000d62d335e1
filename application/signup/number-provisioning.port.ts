/** What sign-up needs from number provisioning: one number, idempotent by `numberId`, first month charged. */
export interface NumberProvisioningPort {
  provision(
    ctx: { accountId: string; requestId: string | null; correlationId: string; actor: string },
    o: { numberId: string; agentId: string | null; country: 'US' | 'CA'; areaCode: string | null },
  ): Promise<{ numberId: string; phoneNumber: string }>;
}
