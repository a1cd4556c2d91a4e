import { Args, Command, Flags } from '@oclif/core';
import { CREDENTIAL_KINDS } from '../../tenants/credentials.js';
import { rotateCredential } from '../../tenants/tenant-service.js';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace } from '../flags.js';

export default class TenantRotate extends Command {
  static override summary = 'Replace one credential of a tenant and print the new secret once (JSON)';
  static override description =
    'The old secret stops working at once; the new one is not shown again. Works through a daemon running on the data dir, or on the store when none runs.';
  static override examples = ['<%= config.bin %> tenant rotate acme --key api --data-dir ./data'];
  static override args = { tenantId: Args.string({ description: 'tenant id', required: true }) };
  static override flags = {
    key: Flags.string({ description: 'which credential', options: [...CREDENTIAL_KINDS], required: true }),
    ...storeFlags,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TenantRotate);
    const kind = flags.key as (typeof CREDENTIAL_KINDS)[number];
    const result = await operatorCall(storePlace(flags), {
      method: 'POST',
      path: `/tenants/${encodeURIComponent(args.tenantId)}/rotate`,
      body: { key: kind },
      direct: (runtime) => rotateCredential(runtime, args.tenantId, kind),
    }).catch((error: Error) => this.error(error.message, { exit: 1 }));
    this.log(JSON.stringify(result, null, 2));
  }
}
