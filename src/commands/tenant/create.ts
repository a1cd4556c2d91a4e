import { Args, Command } from '@oclif/core';
import { TENANT_ID } from '../../contract/common.js';
import type { TenantCredentials } from '../../contract/tenants.js';
import { createTenant } from '../../tenants/tenant-service.js';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace } from '../flags.js';

export default class TenantCreate extends Command {
  static override summary = 'Create a tenant and print its credentials once (JSON)';
  static override description =
    'Prints { tenantId, apiKey, privateToken, publicToken }; the secrets are not shown again. Works through a daemon running on the data dir, or on the store when none runs.';
  static override examples = ['<%= config.bin %> tenant create acme --data-dir ./data'];
  static override args = { tenantId: Args.string({ description: 'tenant id', required: true }) };
  static override flags = { ...storeFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TenantCreate);
    const parsed = TENANT_ID.safeParse(args.tenantId);
    if (!parsed.success) this.error(parsed.error.issues[0].message, { exit: 2 });
    const credentials = await operatorCall<TenantCredentials>(storePlace(flags), {
      method: 'POST',
      path: '/tenants',
      body: { tenantId: args.tenantId },
      direct: (runtime) => createTenant(runtime, args.tenantId),
    }).catch((error: Error) => this.error(error.message, { exit: 1 }));
    this.log(JSON.stringify(credentials, null, 2));
  }
}
