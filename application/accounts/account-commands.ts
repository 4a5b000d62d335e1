import {
  type AccountCommand,
  accountDecider,
  accountStream,
  DEFAULT_NUMBER_LIMIT,
  STARTING_CREDIT_MICROS,
} from '../../domain/account/account.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { AccountQueries, AccountView, ApiKeyView } from './account-queries.port.js';
import type { ApiKeySecretsPort } from './api-key-secrets.port.js';

export type OpenedAccount = Readonly<{ accountId: string; apiKey: string; keyId: string }>;

/** Account use cases: opening (with a first key), credit, keys. */
export class AccountCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly secrets: ApiKeySecretsPort,
    private readonly accounts: AccountQueries,
  ) {}

  /** Every account write answers from the read model, so it waits for it. */
  private run(ctx: RequestContext, accountId: string, cmd: CommandInput<AccountCommand>) {
    return this.exec.execute(accountDecider, accountStream(accountId), cmd, ctx, { accountId, readYourWrites: true });
  }

  async open(
    ctx: RequestContext,
    o: {
      name: string;
      parentAccountId?: string | null;
      numberLimit?: number;
      startingCreditMicros?: number;
      keyName?: string | null;
      /** an id chosen up front, so that repeating the call opens nothing new (a registration's sub-account) */
      accountId?: string;
    },
  ): Promise<OpenedAccount> {
    const parentAccountId = o.parentAccountId ?? null;
    if (parentAccountId) {
      const parent = await this.accounts.get(parentAccountId);
      if (parent?.status !== 'active') throw new DomainError('ACCOUNT_NOT_FOUND', 'Parent account not found');
      if (parent.parentAccountId)
        throw new DomainError('VALIDATION_ERROR', 'A sub-account cannot have sub-accounts', [
          { field: 'parentAccountId', message: 'must be a master account', type: 'value_error' },
        ]);
    }
    const accountId = o.accountId ?? this.ids.id('acc');
    const keyId = this.ids.id('key');
    const { key, prefix, hash } = this.secrets.generate();
    const withKey = o.keyName !== null;
    await this.run(ctx, accountId, {
      type: 'OpenAccount',
      data: {
        accountId,
        name: o.name,
        parentAccountId,
        numberLimit: o.numberLimit ?? DEFAULT_NUMBER_LIMIT,
        // a sub-account's paid actions are charged to its parent, so it starts with no credit of its own
        startingCreditMicros: o.startingCreditMicros ?? (parentAccountId ? 0 : STARTING_CREDIT_MICROS),
        initialKey: withKey ? { keyId, name: o.keyName ?? 'default', prefix, keyHash: hash } : null,
      },
    });
    return { accountId, apiKey: withKey ? key : '', keyId: withKey ? keyId : '' };
  }

  /**
   * The account of a self-service sign-up, opened invisible (its key is refused until `activate`), with the
   * ids and key hash the sign-up plan chose up front: repeating this creates nothing new.
   */
  async openForSignUp(
    ctx: RequestContext,
    o: {
      accountId: string;
      name: string;
      owner: { userId: string; email: string; projectId: string };
      key: { keyId: string; prefix: string; keyHash: string };
    },
  ) {
    await this.run(ctx, o.accountId, {
      type: 'OpenAccount',
      data: {
        accountId: o.accountId,
        name: o.name,
        parentAccountId: null,
        numberLimit: DEFAULT_NUMBER_LIMIT,
        startingCreditMicros: STARTING_CREDIT_MICROS,
        initialKey: { keyId: o.key.keyId, name: 'default', prefix: o.key.prefix, keyHash: o.key.keyHash },
        pendingActivation: true,
        owner: o.owner,
      },
    });
  }

  async activate(ctx: RequestContext, accountId: string): Promise<void> {
    await this.run(ctx, accountId, { type: 'ActivateAccount', data: { accountId } });
  }

  /** Replace a key whose plain value was lost (a sign-up whose first verify never answered): new key, old one revoked. */
  async replaceKey(ctx: RequestContext, accountId: string, oldKeyId: string): Promise<string> {
    const keyId = this.ids.id('key');
    const { key, prefix, hash } = this.secrets.generate();
    await this.run(ctx, accountId, { type: 'IssueApiKey', data: { accountId, keyId, name: 'default', prefix, keyHash: hash } });
    await this.run(ctx, accountId, { type: 'RevokeApiKey', data: { accountId, keyId: oldKeyId } });
    return key;
  }

  /** A sub-account of the acting (master) account. */
  async openSubAccount(ctx: RequestContext, name: string): Promise<AccountView> {
    await this.requireMaster(ctx);
    const { accountId } = await this.open(ctx, { name, parentAccountId: ctx.accountId, keyName: null });
    return this.view(accountId);
  }

  async renameSubAccount(ctx: RequestContext, subAccountId: string, name: string): Promise<AccountView> {
    await this.ownedSubAccount(ctx, subAccountId);
    await this.run(ctx, subAccountId, { type: 'RenameAccount', data: { accountId: subAccountId, name } });
    return this.view(subAccountId);
  }

  async closeSubAccount(ctx: RequestContext, subAccountId: string): Promise<AccountView> {
    await this.ownedSubAccount(ctx, subAccountId);
    await this.run(ctx, subAccountId, { type: 'CloseAccount', data: { accountId: subAccountId } });
    return this.view(subAccountId);
  }

  /** A new key for the acting account; the plain key is returned here once and never stored. */
  async issueKey(ctx: RequestContext, name: string): Promise<{ key: string; view: ApiKeyView }> {
    const keyId = this.ids.id('key');
    const { key, prefix, hash } = this.secrets.generate();
    await this.run(ctx, ctx.accountId, { type: 'IssueApiKey', data: { accountId: ctx.accountId, keyId, name, prefix, keyHash: hash } });
    const view = await this.accounts.key(ctx.accountId, keyId);
    if (!view) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
    return { key, view };
  }

  /** Revoked keys are refused (401) from the moment this returns. */
  async revokeKey(ctx: RequestContext, keyId: string): Promise<ApiKeyView> {
    const existing = await this.accounts.key(ctx.accountId, keyId);
    if (!existing) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
    await this.run(ctx, ctx.accountId, { type: 'RevokeApiKey', data: { accountId: ctx.accountId, keyId } });
    return (await this.accounts.key(ctx.accountId, keyId)) ?? existing;
  }

  async setNumberLimitOf(ctx: RequestContext, accountId: string, numberLimit: number): Promise<AccountView> {
    await this.setNumberLimit(ctx, accountId, numberLimit);
    return this.view(accountId);
  }

  private async view(accountId: string): Promise<AccountView> {
    const v = await this.accounts.get(accountId);
    if (!v) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    return v;
  }

  private async requireMaster(ctx: RequestContext): Promise<void> {
    const me = await this.view(ctx.accountId);
    if (me.parentAccountId) throw new DomainError('FORBIDDEN', 'Sub-accounts cannot manage sub-accounts');
  }

  /** Another master's sub-account, or a closed one, is indistinguishable from a missing one. */
  private async ownedSubAccount(ctx: RequestContext, subAccountId: string): Promise<AccountView> {
    await this.requireMaster(ctx);
    const sub = await this.accounts.get(subAccountId);
    if (!sub || sub.parentAccountId !== ctx.accountId || sub.status !== 'active')
      throw new DomainError('ACCOUNT_NOT_FOUND', 'Sub-account not found');
    return sub;
  }

  async setNumberLimit(ctx: RequestContext, accountId: string, numberLimit: number) {
    return this.run(ctx, accountId, { type: 'SetNumberLimit', data: { accountId, numberLimit } });
  }

  async credit(ctx: RequestContext, accountId: string, amountMicros: number, reason: string): Promise<AccountView> {
    await this.run(ctx, accountId, { type: 'CreditAccount', data: { accountId, amountMicros, reason } });
    return this.view(accountId);
  }
}
