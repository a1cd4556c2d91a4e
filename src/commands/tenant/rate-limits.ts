import { Args, Command, Flags } from '@oclif/core';
import { RATE_LIMITS, type RateLimitSettings } from '../../contract/tenants.js';
import { setRateLimits } from '../../tenants/rate-limit-service.js';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace } from '../flags.js';

const budget = (kind: string) =>
  Flags.integer({ description: `requests per minute with the ${kind} (unset: unlimited)`, min: 1 });

export default class TenantRateLimits extends Command {
  static override description =
    "Set a tenant's rate limits, per credential kind, in requests per minute (omitted kinds: unlimited)";
  static override examples = [
    '<%= config.bin %> tenant rate-limits acme --public 6000 --api 1200',
    '<%= config.bin %> tenant rate-limits acme   # no limits',
  ];
  static override args = { tenantId: Args.string({ description: 'tenant id', required: true }) };
  static override flags = {
    api: budget('API key'),
    private: budget('private token'),
    public: budget('public token'),
    jwt: budget('bearer tokens (all of the tenant together)'),
    ...storeFlags,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TenantRateLimits);
    const limits = RATE_LIMITS.parse({
      api: flags.api,
      private: flags.private,
      public: flags.public,
      jwt: flags.jwt,
    });
    const stored = await operatorCall<RateLimitSettings>(storePlace(flags), {
      method: 'PUT',
      path: `/tenants/${encodeURIComponent(args.tenantId)}/rate-limits`,
      body: limits,
      direct: (runtime) => setRateLimits(runtime, args.tenantId, limits),
    }).catch((error: Error) => this.error(error.message, { exit: 1 }));
    this.log(JSON.stringify(stored, null, 2));
  }
}
